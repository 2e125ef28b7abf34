package chrometrace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/trace"
)

// collectivesCut is cut from ../shared/traces/torch/hta/nccl_parser_config/
// nccl_data.json.gz (HTA's tests/data, MIT; see testdata/collectives/README.md):
// its metadata events, its 27 record_param_comms ops, its 21 NCCL kernels
// with collective args and their launch calls, and its first 10 other kernels,
// copied verbatim.
const collectivesCut = "testdata/collectives/nccl_data_cut.json.gz"

// oracleColl is a collective as read from the args by encoding/json.
type oracleColl struct {
	source                              trace.CollectiveSource
	start, dur, corr, thread, in, out   int64
	groupSize                           int64
	op, dtype, group, ranks, kernelName string
}

// collectivesByJSON reads the collective args of every complete kernel and
// record_param_comms op with encoding/json, independently of the scanner.
func collectivesByJSON(t *testing.T, data []byte) []oracleColl {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []oracleColl
	for _, ev := range doc.TraceEvents {
		args, _ := ev["args"].(map[string]any)
		op, _ := args["Collective name"].(string)
		if ev["ph"] != "X" || op == "" {
			continue
		}
		c := oracleColl{op: op, start: microsToNS(t, ev["ts"].(json.Number)), in: -1, out: -1, groupSize: -1}
		switch ev["cat"] {
		case "kernel":
			c.source = trace.CollectiveOnKernel
			c.corr, _ = jsonInt(args["correlation"])
			c.kernelName = ev["name"].(string)
		case "cpu_op":
			if ev["name"] != "record_param_comms" {
				continue
			}
			c.source = trace.CollectiveOnCPUOp
			c.dur = microsToNS(t, ev["dur"].(json.Number))
			c.thread, _ = jsonInt(ev["tid"])
		default:
			continue
		}
		if n, ok := jsonInt(args["In msg nelems"]); ok {
			c.in = n
		}
		if n, ok := jsonInt(args["Out msg nelems"]); ok {
			c.out = n
		}
		if n, ok := jsonInt(args["Group size"]); ok {
			c.groupSize = n
		}
		c.dtype, _ = args["dtype"].(string)
		c.group, _ = args["Process Group Name"].(string)
		c.ranks, _ = args["Process Group Ranks"].(string)
		out = append(out, c)
	}
	return out
}

// collectivesOf turns the parsed collectives into oracleColls, naming each
// kernel's activity.
func collectivesOf(t *testing.T, tr *trace.Trace) []oracleColl {
	t.Helper()
	var out []oracleColl
	for _, c := range tr.Collectives {
		o := oracleColl{source: c.Source, start: int64(c.Start), dur: c.Dur, corr: c.Corr, thread: c.Thread,
			in: c.InElems, out: c.OutElems, groupSize: int64(c.GroupSize), op: tr.Name(c.Op),
			dtype: tr.Name(c.DType), group: tr.Name(c.Group), ranks: tr.Name(c.GroupRanks)}
		if c.Source == trace.CollectiveOnKernel {
			// The kernel the args were on is an activity of the model.
			for _, a := range tr.Activities {
				if a.Proc == c.Proc && a.Corr == c.Corr && a.Start == c.Start {
					o.kernelName = tr.Name(a.Name)
				}
			}
			if o.kernelName == "" {
				t.Errorf("collective %+v: no kernel with its proc, correlation and start", c)
			}
		}
		out = append(out, o)
	}
	return out
}

func compareColls(a, b oracleColl) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }

// checkCollectives parses data and compares its collectives with what
// encoding/json reads from the args.
func checkCollectives(t *testing.T, data []byte) *trace.Trace {
	t.Helper()
	tr, err := Parse(bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckValid(); err != nil {
		t.Fatal(err)
	}
	got, want := collectivesOf(t, tr), collectivesByJSON(t, data)
	slices.SortFunc(got, compareColls)
	slices.SortFunc(want, compareColls)
	if !slices.Equal(got, want) {
		t.Fatalf("collectives differ from encoding/json's reading of the args:\n got %v\nwant %v", got, want)
	}
	return tr
}

// countOps counts the collectives by source and op.
func countOps(tr *trace.Trace) map[string]int {
	n := map[string]int{}
	for _, c := range tr.Collectives {
		n[c.Source.String()+" "+tr.Name(c.Op)]++
	}
	return n
}

func TestCollectivesFixture(t *testing.T) {
	tr := checkCollectives(t, readFile(t, collectivesCut))
	want := map[string]int{"args allreduce": 15, "args broadcast": 6, "cpu_op allreduce": 15, "cpu_op broadcast": 6, "cpu_op wait": 6}
	if got := countOps(tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("collectives %v, want %v", got, want)
	}
	// The first broadcast kernel, as its args say (correlation 19832,
	// ts 4458676423385.774).
	c := tr.Collectives[0]
	if c.Source != trace.CollectiveOnKernel || c.Corr != 19832 || c.Start != 4458676423385774 || c.InElems != 53120 ||
		c.OutElems != 53120 || c.GroupSize != 2 || tr.Name(c.Op) != "broadcast" || tr.Name(c.DType) != "Float" ||
		tr.Name(c.Group) != "0" || tr.Name(c.GroupRanks) != "[0, 1]" || c.Dur != 0 || c.Thread != 0 {
		t.Errorf("first collective %+v", c)
	}
	// Kernels without args have no collective.
	if n := len(tr.Activities); n != 31 {
		t.Errorf("%d activities, want 21 NCCL kernels and 10 others", n)
	}
}

func TestCollectivesShared(t *testing.T) {
	t.Run("nccl_parser_config", func(t *testing.T) {
		tr := checkCollectives(t, readFile(t, testenv.Shared(t, "traces", "torch", "hta", "nccl_parser_config", "nccl_data.json.gz")))
		got := countOps(tr)
		if got["args allreduce"] != 15 || got["args broadcast"] != 6 {
			t.Errorf("collectives %v, want 15 AllReduce and 6 Broadcast kernels with args", got)
		}
	})
	t.Run("tracelens b200", func(t *testing.T) {
		tr := checkCollectives(t, readFile(t, testenv.Shared(t, "traces", "torch", "tracelens", "b200", "eager_trace.json.gz")))
		var kernels []trace.Collective
		for _, c := range tr.Collectives {
			if c.Source == trace.CollectiveOnKernel {
				kernels = append(kernels, c)
			}
		}
		if len(kernels) != 1 {
			t.Fatalf("%d kernels with collective args, want 1", len(kernels))
		}
		c := kernels[0]
		if tr.Name(c.Op) != "_allgather_base" || c.InElems != 25136 || c.OutElems != 201088 || c.GroupSize != 8 ||
			tr.Name(c.DType) != "BFloat16" || tr.Name(c.Group) != "3" || tr.Name(c.GroupRanks) != "[0, 1, 2, 3, 4, 5, 6, 7]" {
			t.Errorf("AllGather kernel %+v", c)
		}
	})
}

// readFile returns the decompressed content of a file.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if IsGzip(raw) {
		return gunzip(t, raw)
	}
	return raw
}

// TestCollectiveArgs covers odd args one event at a time.
func TestCollectiveArgs(t *testing.T) {
	const kernel = `{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 5, `
	const op = `{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 3, "ts": 9, "dur": 4, "args": {`
	all := `"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": "1024", "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}}`
	for _, tc := range []struct {
		name, ev string
		want     string // the collective as "op in out size dtype group ranks source start dur corr thread", "" for none
	}{
		{"kernel", kernel + all, "allreduce 1024 1024 2 Float 0 [0, 1] args 10000 0 5 0"},
		{"cpu op", op + all, "allreduce 1024 1024 2 Float 0 [0, 1] cpu_op 9000 4000 0 3"},
		{"absent fields", kernel + `"Collective name": "broadcast"}}`, "broadcast -1 -1 -1    args 10000 0 5 0"},
		{"negative and odd numbers", kernel + `"Collective name": "broadcast", "In msg nelems": -3, "Out msg nelems": "x", "Group size": 1e99}}`, "broadcast -1 -1 -1    args 10000 0 5 0"},
		{"first of a repeated key", kernel + `"Collective name": "broadcast", "Collective name": "allreduce"}}`, "broadcast -1 -1 -1    args 10000 0 5 0"},
		{"no collective name", kernel + `"In msg nelems": 8}}`, ""},
		{"collective name not a string", kernel + `"Collective name": 7}}`, ""},
		{"op without a collective name", op + `"In msg nelems": 8}}`, ""},
		{"args before the name", `{"ph": "X", "cat": "cpu_op", "args": {"Collective name": "barrier"}, "name": "record_param_comms", "tid": 3, "ts": 1, "dur": 1}`, "barrier -1 -1 -1    cpu_op 1000 1000 0 3"},
		{"another cpu op", `{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 3, "ts": 1, "dur": 1, "args": {"Collective name": "x"}}`, ""},
		// Kineto copies collective args onto NCCL (RCCL) kernels only: on
		// another kernel they are not read, wherever they come.
		{"other kernel, args first", `{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"Collective name": "x", "device": 0, "stream": 7, "correlation": 5}}`, ""},
		{"other kernel, args last", `{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 5, "Collective name": "x"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := parseBoth(t, []byte(`{"traceEvents": [`+tc.ev+`]}`))
			if err != nil && !strings.HasPrefix(err.Error(), "not a Chrome trace") {
				t.Fatal(err)
			}
			var got []string
			if tr != nil {
				for _, c := range tr.Collectives {
					got = append(got, fmt.Sprintf("%s %d %d %d %s %s %s %s %d %d %d %d", tr.Name(c.Op), c.InElems, c.OutElems, c.GroupSize,
						tr.Name(c.DType), tr.Name(c.Group), tr.Name(c.GroupRanks), c.Source, c.Start, c.Dur, c.Corr, c.Thread))
				}
			}
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("collectives %q, want %q", got, want)
			}
		})
	}
}

// TestCollectiveSplitSizes reads all_to_all's per-peer split sizes as
// PyTorch writes them (torch/csrc/profiler/util.cpp format_list: "[a, b]",
// "[]" for an even split, the first 30 and ", ..." past 30 peers) into
// their sums, on the kernel and on the record_param_comms op; what does
// not give a whole count is -1.
func TestCollectiveSplitSizes(t *testing.T) {
	const kernel = `{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 5, "Collective name": "all_to_allv", `
	const op = `{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 3, "ts": 9, "dur": 4, "args": {"Collective name": "all_to_allv", `
	long := make([]string, 30)
	for i := range long {
		long[i] = "2"
	}
	thirty := "[" + strings.Join(long, ", ") + "]"
	truncated := "[" + strings.Join(long, ", ") + ", ...]"
	for _, tc := range []struct {
		name, ev string
		in, out  int64
	}{
		{"kernel", kernel + `"In split size": "[3, 0, 5, 1]", "Out split size": "[2, 2, 2, 2]"}}`, 9, 8},
		{"cpu op", op + `"Out split size": "[7,1]", "In split size": "[ 4 , 4 ]"}}`, 8, 8},
		{"even split", kernel + `"In split size": "[]", "Out split size": "[]"}}`, -1, -1},
		{"absent", kernel + `"In msg nelems": 8}}`, -1, -1},
		{"thirty peers", kernel + `"In split size": "` + thirty + `", "Out split size": "[1]"}}`, 60, 1},
		{"truncated past thirty", kernel + `"In split size": "` + truncated + `", "Out split size": "[1]"}}`, -1, 1},
		{"negative, not a number, not a list", kernel + `"In split size": "[1, -2]", "Out split size": "[1, x]"}}`, -1, -1},
		{"a number, not a string", kernel + `"In split size": 5, "Out split size": "1, 2"}}`, -1, -1},
		{"overflow", kernel + `"In split size": "[9223372036854775807, 1]", "Out split size": "[0]"}}`, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := parseBoth(t, []byte(`{"traceEvents": [`+tc.ev+`]}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Collectives) != 1 {
				t.Fatalf("%d collectives", len(tr.Collectives))
			}
			if c := tr.Collectives[0]; c.InSplit != tc.in || c.OutSplit != tc.out {
				t.Errorf("split sums %d %d, want %d %d", c.InSplit, c.OutSplit, tc.in, tc.out)
			}
		})
	}
}

func gunzip(t *testing.T, z []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSeenBits: every key bit lies below needNever, which no event may
// meet (the split sizes took the last two bits of a uint32, which
// needNever was).
func TestSeenBits(t *testing.T) {
	all := []uint64{seenPh, seenCat, seenName, seenPid, seenTid, seenTs, seenDur, seenArgs, seenID, seenDevice, seenStream, seenCorr,
		seenCollName, seenInElems, seenOutElems, seenGroupSize, seenDType, seenGroup, seenRanks, seenArgsEnd, seenExt, seenGrid,
		seenBlock, seenRegs, seenSmem, seenKernel, seenDims, seenTypes, seenConcrete, seenStrides, seenInSplit, seenOutSplit}
	var union uint64
	for _, b := range all {
		if b&needNever != 0 || union&b != 0 {
			t.Errorf("bit %#x collides", b)
		}
		union |= b
	}
	f := fields{seen: union, need: needNever}
	if f.done() {
		t.Error("needNever met by every key")
	}
}
