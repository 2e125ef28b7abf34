package nsyssqlite

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/traceq/traceq/trace"
)

// The SQL side of naming ranks (ranks.go): what each source says, read
// from the export's tables, each optional.

const (
	tableThreadNames   = "ThreadNames"
	tableCapture       = "META_DATA_CAPTURE"
	tableSystemEnv     = "TARGET_INFO_SYSTEM_ENV"
	tablePayloadSchema = "NVTX_PAYLOAD_SCHEMA_ENTRIES"
)

// nameRanks names the ranks of the trace's processes (see ranks.go).
func (r *reader) nameRanks() error {
	t := r.b.t
	procOf := map[int64]int{} // globalPid key → index into t.Procs
	var gpu []int
	for i, k := range r.b.procKeys {
		procOf[k] = i
		if r.b.procGPU[i] {
			gpu = append(gpu, i)
		}
	}
	if len(gpu) == 0 {
		return nil
	}
	var src rankSources
	var err error
	if src.nccl, err = r.ncclRanks(procOf); err != nil {
		return err
	}
	if src.thread, err = r.threadRanks(procOf); err != nil {
		return err
	}
	if src.env, err = r.envRanks(procOf, gpu); err != nil {
		return err
	}
	src.device = map[int]int32{}
	multi := map[int]bool{}
	for i := range t.Activities {
		a := &t.Activities[i]
		p := int(a.Proc)
		if d, ok := src.device[p]; ok && d != a.Device {
			multi[p] = true
		}
		src.device[p] = a.Device
	}
	for p := range multi {
		delete(src.device, p)
	}
	assignRanks(t, gpu, src)
	return nil
}

// ncclRanks reads ncclCommInitRank payloads: the schemas whose entries
// include "Rank" and "No. of ranks", and the NVTX events carrying them.
func (r *reader) ncclRanks(procOf map[int64]int) (map[int]rankCandidate, error) {
	if !r.has(tablePayloadSchema) || !r.has(tableNVTX) {
		return nil, nil
	}
	nvtx, err := r.columns(tableNVTX)
	if err != nil {
		return nil, err
	}
	entries, err := r.columns(tablePayloadSchema)
	if err != nil {
		return nil, err
	}
	if !nvtx["binaryData"] || !nvtx["globalTid"] {
		return nil, nil
	}
	for _, c := range []string{"schemaId", "name", "type", "offset"} {
		if !entries[c] {
			return nil, nil
		}
	}
	schemas := map[int64]nvtxPayload{}
	found := map[int64]int{} // fields found per schema
	err = r.scanRows(tablePayloadSchema, `SELECT schemaId, name, type, "offset" FROM "`+r.tables[tablePayloadSchema]+`" WHERE name IN ('Rank', 'No. of ranks')`, 4,
		func(v []driver.Value, _ int64) {
			id, ok := v[0].(int64)
			name, _ := v[1].(string)
			typ, _ := v[2].(int64)
			off, _ := v[3].(int64) // NULL for the first entry: offset 0
			size := payloadTypeSize(typ)
			if !ok || size == 0 || off < 0 || off > 1<<16 {
				return
			}
			s := schemas[id]
			switch name {
			case "Rank":
				s.rankOff, s.rankSize = int(off), size
			case "No. of ranks":
				s.nranksOff, s.nranksSize = int(off), size
			}
			schemas[id] = s
			found[id]++
		})
	if err != nil {
		return nil, err
	}
	for id, s := range schemas {
		if s.rankSize == 0 || s.nranksSize == 0 {
			delete(schemas, id)
		}
	}
	if len(schemas) == 0 {
		return nil, nil
	}
	inits := map[int][]ncclInit{}
	err = r.scanRows(tableNVTX, `SELECT globalTid, binaryData FROM "`+r.tables[tableNVTX]+`" WHERE binaryData IS NOT NULL`, 2,
		func(v []driver.Value, _ int64) {
			g, _ := v[0].(int64)
			p, ok := procOf[g&pidMask]
			if !ok {
				return
			}
			var blob []byte
			switch x := v[1].(type) {
			case []byte:
				blob = x
			case string:
				blob = []byte(x)
			}
			if in, ok := decodeInit(blob, schemas); ok {
				inits[p] = append(inits[p], in)
			}
		})
	if err != nil {
		return nil, err
	}
	out := map[int]rankCandidate{}
	for p, ins := range inits {
		if best, ok := bestInit(ins); ok {
			out[p] = rankCandidate{rank: int(best.rank), name: fmt.Sprintf("rank %d of %d", best.rank, best.nranks)}
		}
	}
	return out, nil
}

// threadRanks reads the thread names of each process (ThreadNames), with
// the process's own name last.
func (r *reader) threadRanks(procOf map[int64]int) (map[int]rankCandidate, error) {
	names := map[int][]string{}
	if r.has(tableThreadNames) {
		cols, err := r.columns(tableThreadNames)
		if err != nil {
			return nil, err
		}
		if cols["nameId"] && cols["globalTid"] && r.has(tableStrings) {
			err := r.scanRows(tableThreadNames, `SELECT t.globalTid, substr(CAST(s.value AS BLOB), 1, 256) FROM "`+r.tables[tableThreadNames]+
				`" t JOIN "`+r.tables[tableStrings]+`" s ON s.id = t.nameId ORDER BY t.rowid`, 2, func(v []driver.Value, _ int64) {
				g, _ := v[0].(int64)
				p, ok := procOf[g&pidMask]
				if !ok {
					return
				}
				switch x := v[1].(type) {
				case []byte:
					names[p] = append(names[p], string(x))
				case string:
					names[p] = append(names[p], x)
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	for i, p := range r.b.t.Procs {
		if p.Name != "" {
			names[i] = append(names[i], p.Name)
		}
	}
	return threadRanks(names), nil
}

// envRanks reads the environment captured with each launched process
// (META_DATA_CAPTURE's PROCESS_n:ENVIRONMENT_VARIABLE rows, matched to a
// process by PROCESS_n:PID) and, for an export of one GPU process, the
// environment nsys recorded of its target (TARGET_INFO_SYSTEM_ENV's
// DeviceEnvironment).
func (r *reader) envRanks(procOf map[int64]int, gpu []int) (map[int]rankCandidate, error) {
	type launched struct {
		pid int64
		env map[string]string
	}
	byN := map[string]*launched{}
	get := func(n string) *launched {
		if byN[n] == nil {
			byN[n] = &launched{pid: -1, env: map[string]string{}}
		}
		return byN[n]
	}
	if r.has(tableCapture) {
		err := r.scanRows(tableCapture, `SELECT name, value FROM "`+r.tables[tableCapture]+`" WHERE name LIKE 'PROCESS_%:%'`, 2, func(v []driver.Value, _ int64) {
			name, _ := v[0].(string)
			val, _ := v[1].(string)
			n, field, ok := strings.Cut(name, ":")
			if !ok {
				return
			}
			switch field {
			case "PID":
				var pid int64
				if _, err := fmt.Sscan(val, &pid); err == nil {
					get(n).pid = pid
				}
			case "ENVIRONMENT_VARIABLE":
				if k, v, ok := parseEnvAssignment(val); ok {
					get(n).env[k] = v
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	out := map[int]rankCandidate{}
	t := r.b.t
	for _, l := range byN {
		c, ok := envRank(l.env)
		if !ok {
			continue
		}
		for _, p := range gpu {
			if t.Procs[p].PID == l.pid {
				out[p] = c
			}
		}
		// nsys launched the one process (PROCESS_0:PID is 0, not known
		// when capture began): with a single GPU process, it is that one.
		if len(gpu) == 1 && len(byN) == 1 && l.pid <= 0 {
			out[gpu[0]] = c
		}
	}
	if len(out) == 0 && len(gpu) == 1 && r.has(tableSystemEnv) {
		cols, err := r.columns(tableSystemEnv)
		if err != nil {
			return nil, err
		}
		if cols["name"] && cols["value"] {
			env := map[string]string{}
			err := r.scanRows(tableSystemEnv, `SELECT value FROM "`+r.tables[tableSystemEnv]+`" WHERE name = 'DeviceEnvironment'`, 1, func(v []driver.Value, _ int64) {
				s, _ := v[0].(string)
				for _, kv := range strings.Split(s, ";") {
					if k, v, ok := parseEnvAssignment(kv); ok {
						env[k] = v
					}
				}
			})
			if err != nil {
				return nil, err
			}
			if c, ok := envRank(env); ok {
				out[gpu[0]] = c
			}
		}
	}
	return out, nil
}

// readHost reads the name of the machine the export was taken on.
func (r *reader) readHost() error {
	if !r.has(tableSystemEnv) {
		return nil
	}
	cols, err := r.columns(tableSystemEnv)
	if err != nil {
		return err
	}
	if !cols["name"] || !cols["value"] {
		return nil
	}
	return r.scanRows(tableSystemEnv, `SELECT value FROM "`+r.tables[tableSystemEnv]+`" WHERE name = 'Hostname' LIMIT 1`, 1, func(v []driver.Value, _ int64) {
		if s, ok := v[0].(string); ok {
			r.b.t.Meta.Host, _ = trace.CutName(s)
		}
	})
}
