package merge

import (
	"strconv"
)

// The rewriting of one raw Chrome-trace event: its process, thread, time
// and id replaced, everything else copied as it is. The Reader has
// checked the event's syntax, so a scan of its top-level members needs
// only to skip strings and nested values.

// edit is what a rank's events change.
type edit struct {
	pid     int64          // the rank's process in the merged trace
	shift   int64          // ns added to ts
	idBase  int64          // added to a numeric id (flows, async events)
	idTag   string         // prefixed to a string id
	devices map[int64]bool // the trace's pids that are GPUs
	// devMap, when set, renumbers the GPUs in the events' args.device:
	// ranks on different hosts share ordinals (cuda:0 on every node),
	// and a reader of the merged trace must tell their GPUs apart.
	devMap map[int64]int64
}

// gpuTid is the thread of GPU device d's stream s in the merged process:
// apart from any OS thread id.
func gpuTid(d, s int64) int64 { return 1<<40 + d<<20 + s }

// member is one top-level member of an object: the key's text and where
// its value lies.
type member struct {
	key        string
	start, end int
}

// members lists the top-level members of the JSON object raw, appending
// to out; ok is false when raw is not an object.
func members(raw []byte, out []member) ([]member, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return out, false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return out, false
		}
		switch raw[i] {
		case '}':
			return out, true
		case ',':
			i++
			continue
		case '"':
		default:
			return out, false
		}
		ke := skipString(raw, i)
		if ke < 0 {
			return out, false
		}
		key := string(raw[i+1 : ke-1])
		i = skipSpace(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			return out, false
		}
		vs := skipSpace(raw, i+1)
		ve := skipValue(raw, vs)
		if ve < 0 {
			return out, false
		}
		out = append(out, member{key, vs, ve})
		i = ve
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index past the string starting at b[i] ('"'),
// -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index past the value starting at b[i], -1 when
// it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipString(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	return j
}

// appendMicros writes ns as Chrome traces count time: µs with three
// decimals, exactly.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		if ns == -1<<63 {
			return append(b, "9223372036854775.808"...)
		}
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	r := ns % 1000
	return append(b, '.', byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
}

// rewrite appends raw to dst with the edit's process, thread, time and id:
// pid becomes the rank's process; tid, on a GPU's events, the GPU
// stream's thread (gpuTid); ts moves by the shift (metadata events keep
// theirs); an id is made unique to the rank. It returns the event's GPU
// (device, stream) when it is on one, and ok false when raw is not an
// object (written unchanged then).
func (e *edit) rewrite(dst, raw []byte, ts int64, hasTS, meta bool, scratch []member) (out []byte, dev, stream int64, gpu bool, ms []member) {
	ms, ok := members(raw, scratch[:0])
	if !ok {
		return append(dst, raw...), 0, 0, false, ms
	}
	var oldPid, oldTid int64
	pidNum, tidNum := false, false
	for _, m := range ms {
		switch m.key {
		case "pid":
			if v, err := strconv.ParseInt(string(raw[m.start:m.end]), 10, 64); err == nil {
				oldPid, pidNum = v, true
			}
		case "tid":
			if v, err := strconv.ParseInt(string(raw[m.start:m.end]), 10, 64); err == nil {
				oldTid, tidNum = v, true
			}
		}
	}
	gpu = pidNum && e.devices[oldPid]
	last := 0
	for _, m := range ms {
		var val []byte
		switch m.key {
		case "pid":
			val = strconv.AppendInt(nil, e.pid, 10)
		case "tid":
			if gpu && tidNum {
				val = strconv.AppendInt(nil, gpuTid(oldPid, oldTid), 10)
			}
		case "ts":
			if hasTS && !meta && e.shift != 0 {
				val = appendMicros(nil, ts+e.shift)
			}
		case "args":
			if gpu && e.devMap != nil {
				val = e.renumber(raw[m.start:m.end])
			}
		case "id":
			v := raw[m.start:m.end]
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				val = strconv.AppendInt(nil, n+e.idBase, 10)
			} else if len(v) >= 2 && v[0] == '"' {
				val = append(append(append([]byte{'"'}, e.idTag...), ':'), v[1:]...)
			}
		}
		if val == nil {
			continue
		}
		dst = append(dst, raw[last:m.start]...)
		dst = append(dst, val...)
		last = m.end
	}
	dst = append(dst, raw[last:]...)
	return dst, oldPid, oldTid, gpu, ms
}

// renumber returns args (a JSON object) with its "device" renumbered by
// devMap, nil when it has none to renumber.
func (e *edit) renumber(args []byte) []byte {
	ms, ok := members(args, nil)
	if !ok {
		return nil
	}
	for _, m := range ms {
		if m.key != "device" {
			continue
		}
		d, err := strconv.ParseInt(string(args[m.start:m.end]), 10, 64)
		nd, found := e.devMap[d]
		if err != nil || !found {
			return nil
		}
		out := append([]byte(nil), args[:m.start]...)
		out = strconv.AppendInt(out, nd, 10)
		return append(out, args[m.end:]...)
	}
	return nil
}
