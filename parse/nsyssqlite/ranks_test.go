package nsyssqlite

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/traceq/traceq/trace"
)

// torchrun2 copies the real 2-process torchrun export (processes 148 and
// 149, on devices 0 and 1) for editing.
func torchrun2(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "x.sqlite")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// mainTid is the globalTid of the main thread of pid, as nsys packs it.
func mainTid(pid int64) int64 { return 1<<48 | pid<<24 | pid }

// initPayload is an ncclCommInitRank NVTX payload as nsys exports it with
// --include-blobs: the 32-byte header, then NCCL's struct (communicator
// id, ranks, rank, CUDA device) at the offsets of schema 16777218, which
// the export's NVTX_PAYLOAD_SCHEMA_ENTRIES declares.
func initPayload(comm uint64, nranks, rank, dev int32) string {
	b := make([]byte, 32+24)
	binary.LittleEndian.PutUint32(b[0:], 1)
	binary.LittleEndian.PutUint32(b[8:], 16777218)
	binary.LittleEndian.PutUint64(b[16:], 24)
	binary.LittleEndian.PutUint64(b[24:], 56)
	binary.LittleEndian.PutUint64(b[32:], comm)
	binary.LittleEndian.PutUint32(b[40:], uint32(nranks))
	binary.LittleEndian.PutUint32(b[44:], uint32(rank))
	binary.LittleEndian.PutUint32(b[48:], uint32(dev))
	return "X'" + hex.EncodeToString(b) + "'"
}

// The rank sources, one at a time and together, on the real export
// edited: each names the processes against their devices' order, so that
// the device cannot be what named them.
func TestRankSources(t *testing.T) {
	nccl := []string{
		// Each process joins the world (2 ranks) and a communicator of
		// its own (1 rank): the world's rank names it.
		`INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, textId, domainId, binaryData) VALUES (1, 2, 59, ` + fmt.Sprint(mainTid(148)) + `, NULL, 1, ` + initPayload(7, 1, 0, 0) + `)`,
		`INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, textId, domainId, binaryData) VALUES (1, 2, 59, ` + fmt.Sprint(mainTid(148)) + `, NULL, 1, ` + initPayload(9, 2, 1, 0) + `)`,
		`INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, textId, domainId, binaryData) VALUES (1, 2, 59, ` + fmt.Sprint(mainTid(149)) + `, NULL, 1, ` + initPayload(9, 2, 0, 1) + `)`,
		// A payload of another schema is not an init.
		`INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, textId, domainId, binaryData) VALUES (1, 2, 59, ` + fmt.Sprint(mainTid(149)) + `, NULL, 1, X'01000000000000000E00000100000000')`,
	}
	threads := []string{
		`INSERT INTO StringIds (id, value) VALUES (990001, 'VLLM::Worker_TP1'), (990002, 'VLLM::Worker_TP0')`,
		`INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (990001, 0, ` + fmt.Sprint(mainTid(148)+1) + `), (990002, 0, ` + fmt.Sprint(mainTid(149)+3) + `)`,
	}
	env := []string{
		`INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_1:PID', '148'), ('PROCESS_1:ENVIRONMENT_VARIABLE', 'RANK="1"'),
			('PROCESS_2:PID', '149'), ('PROCESS_2:ENVIRONMENT_VARIABLE', 'LOCAL_RANK="1"'), ('PROCESS_2:ENVIRONMENT_VARIABLE', 'RANK="0"')`,
	}
	for _, tc := range []struct {
		name   string
		stmts  [][]string
		source trace.RankSource
		ranks  string
	}{
		{"device", nil, trace.RankFromDevice, "[0 cuda:0 1 cuda:1]"},
		{"nccl", [][]string{nccl}, trace.RankFromNCCL, "[1 rank 1 of 2 0 rank 0 of 2]"},
		{"thread names", [][]string{threads}, trace.RankFromThreadName, "[1 TP1 0 TP0]"},
		{"environment", [][]string{env}, trace.RankFromEnv, "[1 RANK=1 0 RANK=0]"},
		{"nccl first", [][]string{env, threads, nccl}, trace.RankFromNCCL, "[1 rank 1 of 2 0 rank 0 of 2]"},
		{"thread names before the environment", [][]string{env, threads}, trace.RankFromThreadName, "[1 TP1 0 TP0]"},
		// A source that names one process only, or two alike, names none.
		{"partial", [][]string{{threads[0], `INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (990001, 0, ` + fmt.Sprint(mainTid(148)+1) + `)`}}, trace.RankFromDevice, "[0 cuda:0 1 cuda:1]"},
		{"same rank twice", [][]string{{threads[0], `INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (990001, 0, ` + fmt.Sprint(mainTid(148)) + `), (990001, 0, ` + fmt.Sprint(mainTid(149)) + `)`}}, trace.RankFromDevice, "[0 cuda:0 1 cuda:1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := torchrun2(t)
			for _, s := range tc.stmts {
				editDB(t, path, s...)
			}
			tr := mustOpen(t, path, Options{})
			var got []any
			for _, p := range tr.Procs {
				got = append(got, p.Rank, p.RankName)
			}
			if tr.Meta.RankSource != tc.source || fmt.Sprint(got) != tc.ranks || tr.Meta.Rank != -1 {
				t.Errorf("source %v, ranks %v (Meta.Rank %d); want %v, %s", tr.Meta.RankSource, got, tr.Meta.Rank, tc.source, tc.ranks)
			}
		})
	}
}

// TestSingleProcessRank: an export of one process takes its rank from
// the environment nsys captured (one export per rank, launched by
// mpirun or torchrun), and never from its device.
func TestSingleProcessRank(t *testing.T) {
	path := tmpFixture(t) // one process, pid 24129
	tr := mustOpen(t, path, Options{})
	if tr.Meta.RankSource != trace.RankUnknown || tr.Procs[0].Rank != -1 {
		t.Fatalf("unedited: %v, rank %d", tr.Meta.RankSource, tr.Procs[0].Rank)
	}
	editDB(t, path, `CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT)`,
		`INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:PID', '0'), ('PROCESS_0:ENVIRONMENT_VARIABLE', 'OMPI_COMM_WORLD_RANK="5"')`)
	tr = mustOpen(t, path, Options{})
	if tr.Meta.RankSource != trace.RankFromEnv || tr.Procs[0].Rank != 5 || tr.Meta.Rank != 5 || tr.Procs[0].RankName != "OMPI_COMM_WORLD_RANK=5" {
		t.Errorf("source %v, proc %+v, Meta.Rank %d", tr.Meta.RankSource, tr.Procs[0], tr.Meta.Rank)
	}
}

func TestThreadRanks(t *testing.T) {
	names := map[int][]string{
		0: {"python3", "VLLM::Worker_PP0_TP0"}, 1: {"VLLM::Worker_PP0_TP1"},
		2: {"Worker_PP1_TP0"}, 3: {"pt_nccl_watchdg", "Worker_PP1_TP1"},
		4: {"Worker_TP0", "Worker_TP1"}, // two workers in one process: no name
		5: {"MPI Rank 12"}, 6: {"NotAWorker_TPx", "xWorker_TP3"},
	}
	got := map[int]rankCandidate{}
	for p, c := range threadRanks(names) {
		got[p] = c
	}
	want := map[int]rankCandidate{0: {0, "PP0_TP0"}, 1: {1, "PP0_TP1"}, 2: {2, "PP1_TP0"}, 3: {3, "PP1_TP1"}, 5: {12, "MPI Rank 12"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	dp := threadRanks(map[int][]string{0: {"Worker_DP1_TP1"}, 1: {"Worker_DP0_TP1"}, 2: {"Worker_DP1_TP0"}, 3: {"Worker_DP0_TP0"}})
	var ranks []int
	for p := range 4 {
		ranks = append(ranks, dp[p].rank)
	}
	if !slices.Equal(ranks, []int{3, 1, 2, 0}) {
		t.Errorf("DP×TP ranks %v, want [3 1 2 0]", ranks)
	}
}

func TestDecodeInit(t *testing.T) {
	schemas := map[int64]nvtxPayload{5: {rankOff: 12, rankSize: 4, nranksOff: 8, nranksSize: 4}}
	blob := func(schema uint32, nranks, rank uint32, size int) []byte {
		b := make([]byte, size)
		binary.LittleEndian.PutUint32(b[8:], schema)
		if size >= 48 {
			binary.LittleEndian.PutUint32(b[40:], nranks)
			binary.LittleEndian.PutUint32(b[44:], rank)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"good", blob(5, 8, 3, 56), true},
		{"other schema", blob(6, 8, 3, 56), false},
		{"short", blob(5, 8, 3, 40), false},
		{"header only", blob(5, 8, 3, 32), false},
		{"rank not below ranks", blob(5, 8, 8, 56), false},
		{"negative rank", blob(5, 8, 0xFFFFFFFF, 56), false},
		{"empty", nil, false},
	} {
		in, ok := decodeInit(tc.b, schemas)
		if ok != tc.ok || ok && (in.rank != 3 || in.nranks != 8) {
			t.Errorf("%s: %+v, %v", tc.name, in, ok)
		}
	}
}
