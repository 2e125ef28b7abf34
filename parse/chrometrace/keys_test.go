package chrometrace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// kinetoKernel is a kernel event as Kineto writes it: what the key cache
// learns from.
const kinetoKernel = `{"ph": "X", "cat": "kernel", "name": "void marlin::Marlin<256, 1, 8>(int4 const*, int*)", "pid": 0, "tid": 7, ` +
	`"ts": 6520618000966.891, "dur": 14.225, "args": {"External id": 4, "device": 0, "stream": 7, "correlation": 1002, ` +
	`"registers per thread": 128, "shared memory": 49152, "blocks per SM": 1.2, "warps per SM": 9.7, "grid": [132, 1, 1], ` +
	`"block": [256, 1, 1], "est. achieved occupancy %": 12}}`

const kinetoLaunch = `{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 851, "tid": 851, "ts": 6520618000961.870, ` +
	`"dur": 6.804, "args": {"External id": 3, "cbid": 211, "correlation": 1002}}`

// decoded is what a decoder made of one event.
type decoded struct {
	Kind  EventKind
	End   int
	Exact bool
	F     fields
	Out   record
	Coll  collArgs
	Anoms int
}

// decodeEach decodes each event (followed by a comma, as in a trace) with
// d, through eventAt, and returns what it made of each.
func decodeEach(d *decoder, events []string) []decoded {
	d.res = d.result()
	var out []decoded
	for _, ev := range events {
		s := ev + ",\n  {}"
		kind, end, exact := d.eventAt(s, 0)
		out = append(out, decoded{kind, end, exact, withoutNameID(d.f), d.out, d.coll, len(d.res.anomalies)})
	}
	return out
}

// withoutNameID is f without the name memo's id, which stands for the
// name the slow path interns (records' Name, compared too).
func withoutNameID(f fields) fields {
	f.nameID = 0
	return f
}

// TestKeyCacheAgrees decodes events whose keys the cache knows, written
// the same way or not quite, with a decoder that learnt them and with
// one that reads every key by the slow path, and wants the same from
// both: the fast path must only ever be a shortcut.
func TestKeyCacheAgrees(t *testing.T) {
	kernel := func(old, new string) string {
		if !strings.Contains(kinetoKernel, old) {
			t.Fatalf("%q is not in the kernel event", old)
		}
		return strings.Replace(kinetoKernel, old, new, 1)
	}
	nccl := kernel(`"name": "void marlin::Marlin<256, 1, 8>(int4 const*, int*)"`, `"name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)"`)
	nccl = strings.Replace(nccl, `"est. achieved occupancy %": 12}`, `"est. achieved occupancy %": 12, "Collective name": "allreduce", "In msg nelems": 4096, "Out msg nelems": 4096, "Group size": 8, "dtype": "BFloat16"}`, 1)
	for _, tc := range []struct {
		name string
		ev   string
	}{
		{"as learnt", kinetoKernel},
		{"a launch call", kinetoLaunch},
		{"keys in another order", `{"cat": "kernel", "ph": "X", "pid": 0, "name": "k", "ts": 5.000, "tid": 7, "args": {"device": 0, "correlation": 9, "External id": 4, "stream": 7}, "dur": 1.000}`},
		{"blanks before the colon", kernel(`"cat": "kernel"`, `"cat" : "kernel"`)},
		{"no blank after the colon", kernel(`"pid": 0`, `"pid":0`)},
		{"two blanks after the colon", kernel(`"tid": 7`, `"tid":  7`)},
		{"newline after the colon", kernel(`"ts": 6520618000966.891`, "\"ts\":\n 6520618000966.891")},
		{"no blank after the comma", kernel(`, "dur"`, `,"dur"`)},
		{"blanks before the comma", kernel(`, "dur"`, ` , "dur"`)},
		{"blank after the brace", kernel(`{"ph"`, `{ "ph"`)},
		{"blank after the args brace", kernel(`{"External id"`, `{ "External id"`)},
		{"escaped key", kernel(`"ph": "X"`, `"p\u0068": "X"`)},
		{"escaped args key", kernel(`"device": 0`, `"d\u0065vice": 0`)},
		{"escaped quote in a key", kernel(`"name": `, `"na\"me": "x", "name": `)},
		{"a key longer by a byte", kernel(`"ts": 6520618000966.891`, `"tsx": 1.000, "ts": 6520618000966.891`)},
		{"a key shorter by a byte", kernel(`"dur": 14.225`, `"du": 1.000, "dur": 14.225`)},
		{"keys sharing a prefix", kernel(`"stream": 7`, `"streams": 9, "stream": 7, "stream2": 8`)},
		{"args key as a top-level key", kernel(`"pid": 0`, `"device": 3, "pid": 0`)},
		{"top-level key in args", kernel(`"device": 0`, `"ts": 3.000, "name": "n", "device": 0`)},
		{"a key twice", kernel(`"tid": 7`, `"tid": 7, "tid": 8`)},
		{"the old External id", kernel(`"External id"`, `"external id"`)},
		{"upper case", kernel(`"External id"`, `"EXTERNAL ID"`)},
		{"an empty key", kernel(`"pid": 0`, `"": 1, "pid": 0`)},
		{"empty args", `{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.000, "dur": 1.000, "args": {}}`},
		{"blank args", `{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.000, "dur": 1.000, "args": { }}`},
		{"a collective kernel", nccl},
		{"no comma between members", kernel(`"tid": 7, "ts"`, `"tid": 7 "ts"`)},
		{"no comma in args", kernel(`"device": 0, "stream"`, `"device": 0 "stream"`)},
		{"a comma before the first key", kernel(`{"ph"`, `{, "ph"`)},
		{"a comma before the first args key", kernel(`{"External id"`, `{, "External id"`)},
		{"two commas", kernel(`, "cat"`, `,, "cat"`)},
		{"no colon", kernel(`"pid": 0`, `"pid" 0`)},
		{"a key that is not a string", kernel(`"pid": 0`, `pid: 0`)},
		{"numbers as strings", kernel(`"pid": 0, "tid": 7`, `"pid": "0", "tid": "7"`)},
		{"exponents", kernel(`"ts": 6520618000966.891, "dur": 14.225`, `"ts": 6.5e12, "dur": 1.4225E1`)},
		{"signs", kernel(`"ts": 6520618000966.891, "dur": 14.225`, `"ts": -12.5, "dur": -0.001`)},
		{"long fractions", kernel(`"ts": 6520618000966.891, "dur": 14.225`, `"ts": 6520618000966.8915, "dur": 14.22500`)},
		{"zero fractions", kernel(`"pid": 0, "tid": 7`, `"pid": 0.0, "tid": 7.000`)},
		{"a fraction where an integer goes", kernel(`"stream": 7`, `"stream": 7.5`)},
		{"a long integer", kernel(`"correlation": 1002`, `"correlation": 12345678901234567`)},
		{"a number cut by a byte", kernel(`"correlation": 1002`, `"correlation": 10x2`)},
		{"literals", kernel(`"pid": 0, "tid": 7`, `"pid": null, "tid": true`)},
		{"values that start like the last ones", kernel(`"tid": 7, "ts"`, `"tid": 77, "ts"`)},
		{"values that end like the last ones", kernel(`"device": 0, "stream": 7`, `"device": 10, "stream": 17`)},
		{"a string value longer by a byte", kernel(`"cat": "kernel"`, `"cat": "kernelx"`)},
		{"an escaped string value", kernel(`"ph": "X"`, `"ph": "\u0058"`)},
		{"a string value with an escaped quote", kernel(`"ph": "X"`, `"ph": "X\"", "ph": "X"`)},
		{"a string value with an escaped backslash", kernel(`"cat": "kernel"`, `"cat": "kernel\\"`)},
		{"an array value with a blank", kernel(`"grid": [132, 1, 1]`, `"grid": [132, 1, 1 ]`)},
		{"an array value nested", kernel(`"grid": [132, 1, 1]`, `"grid": [[132], 1, 1]`)},
		{"a skipped value that differs", kernel(`"blocks per SM": 1.2`, `"blocks per SM": 1.25`)},
		{"a skipped value that is a string", kernel(`"warps per SM": 9.7`, `"warps per SM": "9.7"`)},
		{"a value then a blank", kernel(`"stream": 7, `, `"stream": 7 , `)},
		{"a name as learnt", kernel(`"pid": 0`, `"pid": 0`)},
		{"a name one byte longer", kernel(`(int4 const*, int*)"`, `(int4 const*, int*)x"`)},
		{"a name one byte shorter", kernel(`(int4 const*, int*)"`, `(int4 const*, int*"`)},
		{"a name that differs in its last byte", kernel(`(int4 const*, int*)"`, `(int4 const*, int*]"`)},
		{"a name with an escape", kernel(`Marlin<256`, `Marlin\u003c256`)},
		{"a name with an escaped quote", kernel(`Marlin<256`, `Marlin\"256`)},
		{"a name then a blank", kernel(`(int4 const*, int*)"`, `(int4 const*, int*)" `)},
		{"a name twice", kernel(`"pid": 0`, `"name": "void marlin::Marlin<256, 1, 8>(int4 const*, int*)", "pid": 0`)},
		{"a name that is not a string", kernel(`"void marlin::Marlin<256, 1, 8>(int4 const*, int*)"`, `7`)},
		{"a short name", kernel(`"void marlin::Marlin<256, 1, 8>(int4 const*, int*)"`, `"k"`)},
		{"a name of 16 bytes", kernel(`"void marlin::Marlin<256, 1, 8>(int4 const*, int*)"`, `"void marlin::Mar"`)},
		{"a long name", kernel(`"void marlin::Marlin<256, 1, 8>(int4 const*, int*)"`, `"void marlin::Marlin<256, 1, 8>(`+strings.Repeat("int4 const*, ", 200)+`int*)"`)},
		{"a value then the end", kernel(`"est. achieved occupancy %": 12}`, `"est. achieved occupancy %": 12 }`)},
	} {
		// Each event after the ones learnt from, and alone.
		for _, events := range [][]string{{kinetoKernel, kinetoLaunch, kinetoKernel, tc.ev}, {tc.ev}} {
			fast := newDecoder(0)
			generalKeys = true
			general := newDecoder(0)
			generalKeys = false
			got, want := decodeEach(fast, events), decodeEach(general, events)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the key cache reads %s\nas %+v\nthe slow path as %+v", tc.name, tc.ev, got[len(got)-1], want[len(want)-1])
			}
		}
		// Every prefix of the event, as at the end of a chunk.
		fast := newDecoder(0)
		decodeEach(fast, []string{kinetoKernel, kinetoLaunch})
		generalKeys = true
		general := newDecoder(0)
		generalKeys = false
		fast.res, general.res = fast.result(), general.result()
		for n := range len(tc.ev) {
			k1, e1, x1 := fast.eventAt(tc.ev[:n], 0)
			k2, e2, x2 := general.eventAt(tc.ev[:n], 0)
			if k1 != k2 || e1 != e2 || x1 != x2 || !reflect.DeepEqual(withoutNameID(fast.f), general.f) {
				t.Errorf("%s: the first %d bytes: the key cache reads %v, %d, %v; the slow path %v, %d, %v", tc.name, n, k1, e1, x1, k2, e2, x2)
				break
			}
		}
	}
}

// TestKeyCacheLearns checks that the cache does take the fast path on
// Kineto's events (the benchmarks measure what it saves).
func TestKeyCacheLearns(t *testing.T) {
	d := newDecoder(0)
	decodeEach(d, []string{kinetoKernel, kinetoLaunch, kinetoKernel})
	hits := 0
	s := kinetoKernel + ","
	from, slot, first := 1, keyStart, true
	var ctx uint8 // as scanEvent: the category's, once read
	for {
		e, v := d.topKeys.predicted(s, from, first, ctx, slot)
		if e == nil {
			break
		}
		hits++
		first, slot = false, int(e.slot)
		if e.id == keyCat {
			ctx = 1 + uint8(catGPU)
		}
		from = skipValue(s, v)
	}
	if hits != 8 {
		t.Errorf("%d of the kernel's 8 keys predicted", hits)
	}
}

// TestGeneralKeysDecodes parses the test traces with and without the key
// cache and memos.
func TestGeneralKeysDecodes(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(torchDir, "*.json*"))
	if err != nil || len(names) < 10 {
		t.Fatalf("%d test traces (%v)", len(names), err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		data := readTrace(t, name)
		want, err := Parse(bytes.NewReader(data), Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		generalKeys = true
		got, err := Parse(bytes.NewReader(data), Options{Workers: 1})
		generalKeys = false
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the key cache changes the model", name)
		}
	}
}

// generalNumber is what the scanner made of a number before readFixed:
// its end by scalarEnd, its value by parseInt and parseMicros.
func generalNumber(s string) (end int, n int64, nok bool, ns int64, nsok bool) {
	end, _ = scalarEnd(s, 0)
	n, nok = parseInt(s[:end])
	ns, nsok = parseMicros(s[:end])
	return end, n, nok, ns, nsok
}

func checkFixed(t *testing.T, s string) bool {
	t.Helper()
	var v val
	e := readFixed(s, 0, &v)
	if e < 0 {
		if v != (val{}) {
			t.Errorf("readFixed(%q) gave up but set %+v", s, v)
		}
		return false
	}
	end, n, nok, ns, nsok := generalNumber(s)
	v.Type, v.Raw = vNumber, s[:e]
	gn, gnok := num(&v)
	gns, gnsok := micros(&v)
	if e != end || gn != n || gnok != nok || gns != ns || gnsok != nsok {
		t.Errorf("readFixed(%q): end %d, num %d %v, micros %d %v; want %d, %d %v, %d %v", s, e, gn, gnok, gns, gnsok, end, n, nok, ns, nsok)
	}
	return true
}

func TestReadFixed(t *testing.T) {
	const pad = ",                                " // readFixed wants 32 bytes from the number's start
	for _, tc := range []struct {
		in    string
		fixed bool
	}{
		{"0", true}, {"-0", true}, {"7", true}, {"7.0", true}, {"7.000", true}, {"-7.000", true},
		{"7.5", true}, {"1.25", true}, {"-0.001", true}, {"0.999", true}, {"00012", true},
		{"6520618000953.870", true}, {"12345678", true}, {"123456789", true}, {"1234567890123456", false},
		{"123456789012345", true}, {"999999999999999.999", true}, {"-999999999999999.999", true},
		{"1.2345", false}, {"1e5", false}, {"1E5", false}, {"1.5e3", false}, {"1.", false}, {".5", false},
		{"-", false}, {"--1", false}, {"-.5", false}, {"1.5.3", false}, {"12a", false}, {"1-2", false},
		{"1\"", false}, {"1:", false}, {"1{", false}, {"1[", false},
	} {
		for _, tail := range []string{pad, "}" + pad, "]" + pad, " " + pad, "\n" + pad, "\t" + pad, "\r" + pad} {
			if got := checkFixed(t, tc.in+tail); got != tc.fixed {
				t.Errorf("readFixed(%q) read it: %v, want %v", tc.in+tail, got, tc.fixed)
			}
		}
		// At the end of s: the caller reads it.
		if got := checkFixed(t, tc.in); got && len(tc.in) < 9 {
			t.Errorf("readFixed(%q) at the end of s read it", tc.in)
		}
	}
	if t.Failed() {
		return
	}
	// Random numbers, well-formed or not.
	r := rand.New(rand.NewPCG(21, 1))
	const alpha = "0123456789.-eE+ ,}]x\""
	fixed := 0
	for range 200_000 {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.FormatUint(r.Uint64()>>r.IntN(64), 10))
		if r.IntN(2) == 0 {
			b.WriteByte('.')
			b.WriteString(fmt.Sprintf("%05d", r.IntN(100000))[:r.IntN(6)])
		}
		for range r.IntN(3) {
			b.WriteByte(alpha[r.IntN(len(alpha))])
		}
		b.WriteString("                                ")
		if checkFixed(t, b.String()) {
			fixed++
		}
		if t.Failed() {
			return
		}
	}
	if fixed < 20_000 {
		t.Errorf("only %d random numbers read by readFixed", fixed)
	}
}

// FuzzReadFixed checks readFixed against the scanner's general path
// (scalarEnd, then parseInt and parseMicros) on any text after a number's
// first byte, followed by blanks or not.
func FuzzReadFixed(f *testing.F) {
	for _, s := range []string{"0,", "-7.5}", "6520618000953.870, ", "123456789012345.999]", "1.2345,", "1e5,", "12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
			return // readValueInto calls it on these only
		}
		checkFixed(t, s)
		checkFixed(t, s+"                                ")
	})
}
