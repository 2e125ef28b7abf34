package chrometrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"testing"
)

// realTraces are the testdata traces with GPU activity.
var realTraces = []string{
	"vllm_decode_full_graph.json.gz", "vllm_mixed_piecewise.json.gz", "sglang_decode.json.gz",
	"sglang_prefill.json.gz", "vllm_b200_eager_prefill.json.gz", "hta_gpu_user_annotation.json.gz",
	"hta_amd_mi250.json.gz", "hta_legacy_minimal.json.gz", "hta_triton.json.gz",
	"hta_ns_resolution.json.gz", "kineto2021_resnet50.json.gz", "dlrm8/rank3.json.gz",
}

// TestChunkedEqualsSequential parses each input once on one goroutine with
// one big block (the reference) and again with many workers and blocks so
// small that most events straddle two of them: the traces must be equal in
// every field, whatever the worker count and block size.
func TestChunkedEqualsSequential(t *testing.T) {
	synthJSON, _ := synth(3000, 1)
	inputs := map[string][]byte{"synth.json": synthJSON, "synth.json.gz": gz(synthJSON)}
	for _, name := range realTraces {
		inputs[name] = readTrace(t, name)
	}
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		data := inputs[name]
		want, err := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: len(data) + 1}) // one block
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := want.CheckValid(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, opt := range []Options{
			{Workers: 1, BlockSize: 333},
			{Workers: 2, BlockSize: 4096},
			{Workers: 3, BlockSize: 997},
			{Workers: 8, BlockSize: 64 << 10},
			// A size hint sizes the slices; right, low or high, it must
			// not change the result.
			{Workers: 2, BlockSize: 2048, SizeHint: int64(len(data))},
			{Workers: 2, BlockSize: 2048, SizeHint: int64(len(data)) / 7},
			{Workers: 3, BlockSize: 1500, SizeHint: int64(len(data)) * 5},
		} {
			got, err := Parse(bytes.NewReader(data), opt)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, opt, err)
			}
			if err := got.CheckValid(); err != nil {
				t.Fatalf("%s %+v: %v", name, opt, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: workers %d, block %d: trace differs from the sequential parse (%d vs %d activities)",
					name, opt.Workers, opt.BlockSize, len(got.Activities), len(want.Activities))
			}
		}
	}
}

// oracleKernel is a GPU activity as read by encoding/json, independently of
// the parser's scanner and number code.
type oracleKernel struct {
	name              string
	start, dur, corr  int64
	device, stream    int64
	hasDevice, hasStr bool
}

// microsToNS converts decimal µs text exactly (big.Rat), rounding half away
// from zero like the parser documents.
func microsToNS(t *testing.T, n json.Number) int64 {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	neg := r.Sign() < 0
	r.Abs(r)
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if neg {
		q.Neg(q)
	}
	return q.Int64()
}

func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		var n int64
		_, err := fmt.Sscan(string(x), &n)
		return n, err == nil
	}
	return 0, false
}

// TestScannerMatchesEncodingJSON reads every complete GPU activity of the
// real traces with encoding/json and checks that the parser keeps exactly
// those: same names, start and duration to the nanosecond, device, stream
// and correlation id.
func TestScannerMatchesEncodingJSON(t *testing.T) {
	for _, name := range realTraces {
		data := readTrace(t, name)
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var doc struct {
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var want []oracleKernel
		for _, ev := range doc.TraceEvents {
			cat, _ := ev["cat"].(string)
			switch cat {
			case "kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset":
			default:
				continue
			}
			if ev["ph"] != "X" {
				continue
			}
			k := oracleKernel{name: ev["name"].(string)}
			k.start = microsToNS(t, ev["ts"].(json.Number))
			k.dur = microsToNS(t, ev["dur"].(json.Number))
			args, _ := ev["args"].(map[string]any)
			k.corr, _ = jsonInt(args["correlation"])
			k.device, k.hasDevice = jsonInt(args["device"])
			if !k.hasDevice {
				k.device, k.hasDevice = jsonInt(ev["pid"])
			}
			k.stream, k.hasStr = jsonInt(args["stream"])
			if !k.hasStr {
				k.stream, k.hasStr = jsonInt(ev["tid"])
			}
			want = append(want, k)
		}
		tr, err := Parse(bytes.NewReader(data), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []oracleKernel
		for _, a := range tr.Activities {
			got = append(got, oracleKernel{name: tr.Name(a.Name), start: int64(a.Start), dur: a.Dur, corr: a.Corr,
				device: int64(a.Device), hasDevice: a.Device != -1, stream: int64(a.Stream), hasStr: a.Stream != -1})
		}
		order := func(a, b oracleKernel) int {
			return cmpAll(a.start-b.start, a.dur-b.dur, a.device-b.device, a.stream-b.stream, a.corr-b.corr, bytesCompare(a.name, b.name))
		}
		slices.SortFunc(want, order)
		want = slices.CompactFunc(want, func(a, b oracleKernel) bool { return a == b }) // the parser drops exact duplicates
		slices.SortFunc(got, order)
		if len(got) != len(want) {
			t.Errorf("%s: %d GPU activities, encoding/json finds %d", name, len(got), len(want))
			continue
		}
		for i := range got {
			// A string stream ("stream 7") is read by the parser only.
			if !want[i].hasStr {
				want[i].stream, want[i].hasStr = got[i].stream, got[i].hasStr
			}
			if got[i] != want[i] {
				t.Errorf("%s: activity %d: got %+v, want %+v", name, i, got[i], want[i])
				break
			}
		}
	}
}

func cmpAll(ds ...int64) int {
	for _, d := range ds {
		if d != 0 {
			if d < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

func bytesCompare(a, b string) int64 { return int64(bytes.Compare([]byte(a), []byte(b))) }

// TestSkippedEventsLeaveNoTrace checks the premise of the memory budget:
// CPU-side events that are not kept (python_function, cpu_op) leave nothing
// in the model, however many there are, so that memory grows with the
// kernels only.
func TestSkippedEventsLeaveNoTrace(t *testing.T) {
	quiet, _ := synth(2000, 0)
	noisy, _ := synth(2000, 10)
	if len(noisy) < 3*len(quiet) {
		t.Fatalf("noisy trace %d bytes, quiet %d: the noise is too small to show anything", len(noisy), len(quiet))
	}
	a, err := Parse(bytes.NewReader(quiet), Options{BlockSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(bytes.NewReader(noisy), Options{BlockSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the model differs with skipped events: %d/%d activities, %d/%d launches, %d/%d ranges, %d/%d names",
			len(a.Activities), len(b.Activities), len(a.Launches), len(b.Launches), len(a.Ranges), len(b.Ranges), len(a.Names), len(b.Names))
	}
}
