package slice

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/parse/chrometrace"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "1500", want: 1_500_000},
		{in: "1.5ms", want: 1_500_000},
		{in: "250us", want: 250_000},
		{in: "250µs", want: 250_000},
		{in: "90ns", want: 90},
		{in: "2s", want: 2_000_000_000},
		{in: "0.000001s", want: 1_000},
		{in: "1.0005", want: 1_000}, // µs: the half nanosecond is dropped
		{in: ".5ms", want: 500_000},
		{in: "", bad: true},
		{in: "-1", bad: true},
		{in: "1.5x", bad: true},
		{in: "ms", bad: true},
		{in: "99999999999999999999", bad: true},
	} {
		got, err := ParseDuration(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseRangeAndSteps(t *testing.T) {
	const open = 1<<63 - 1
	for _, tc := range []struct {
		in       string
		from, to int64
		bad      bool
	}{
		{in: "100:200", from: 100_000, to: 200_000},
		{in: "1ms:2ms", from: 1_000_000, to: 2_000_000},
		{in: ":2ms", from: 0, to: 2_000_000},
		{in: "5ms:", from: 5_000_000, to: open},
		{in: "2ms:1ms", bad: true},
		{in: "100", bad: true},
	} {
		f, to, err := ParseRange(tc.in)
		if (err != nil) != tc.bad || f != tc.from || to != tc.to {
			t.Errorf("ParseRange(%q) = %d, %d, %v", tc.in, f, to, err)
		}
	}
	for _, tc := range []struct {
		in       string
		from, to int
		bad      bool
	}{
		{in: "100:110", from: 100, to: 110},
		{in: "3", from: 3, to: 4},
		{in: "3:", from: 3, to: -1},
		{in: ":2", from: 0, to: 2},
		{in: "5:5", bad: true},
		{in: "a:b", bad: true},
		{in: "-1:2", bad: true},
	} {
		f, to, err := ParseSteps(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && (f != tc.from || to != tc.to)) {
			t.Errorf("ParseSteps(%q) = %d, %d, %v", tc.in, f, to, err)
		}
	}
}

func opener(data []byte) Opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

// The window's edges and the kinds of events, on a hand-made trace.
func TestCopyWindow(t *testing.T) {
	const in = `{"schemaVersion":1,"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"ts":0,"args":{"name":"p"}},
{"ph":"X","name":"before","ts":5,"dur":4},
{"ph":"X","name":"straddles start","ts":9,"dur":2},
{"ph":"X","name":"at start","ts":10,"dur":1},
{"ph":"X","name":"ends at end","ts":15,"dur":5},
{"ph":"X","name":"straddles end","ts":19,"dur":2},
{"ph":"i","name":"instant at end","ts":20},
{"ph":"X","cat":"kernel","name":"gpu inside","ts":12,"dur":1,"args":{"correlation":3}},
{"ph":"X","name":"untimed"},
{"ph":"s","cat":"ac2g","id":3,"ts":11},
{"ph":"f","cat":"ac2g","id":3,"ts":12,"bp":"e"},
{"ph":"s","cat":"ac2g","id":4,"ts":11},
{"ph":"f","cat":"ac2g","id":4,"ts":25,"bp":"e"},
{"ph":"s","cat":"fwdbwd","id":5,"ts":1},
{"ph":"f","cat":"fwdbwd","id":5,"ts":13}
],"deviceProperties":[{"id":0}]}`
	start, err := Start(opener([]byte(in)))
	if err != nil || start != 12_000 {
		t.Fatalf("Start = %d, %v; want 12000 (µs 12, the first GPU activity)", start, err)
	}
	var out bytes.Buffer
	st, err := Copy(opener([]byte(in)), Window(10_000, 20_000), &out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Ph   string `json:"ph"`
			ID   int    `json:"id"`
		} `json:"traceEvents"`
		DeviceProperties []map[string]int `json:"deviceProperties"`
		SchemaVersion    int              `json:"schemaVersion"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	var got []string
	for _, e := range doc.TraceEvents {
		if e.Ph == "s" || e.Ph == "f" {
			got = append(got, e.Ph+string(rune('0'+e.ID)))
			continue
		}
		got = append(got, e.Name)
	}
	want := []string{"process_name", "at start", "ends at end", "instant at end", "gpu inside", "s3", "f3"}
	if !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if doc.SchemaVersion != 1 || len(doc.DeviceProperties) != 1 {
		t.Errorf("top-level values lost: %s", out.String())
	}
	wantSt := Stats{Read: 15, Kept: 7, Metadata: 1, Flows: 2, Untimed: 1, TopKeys: 2}
	if *st != wantSt {
		t.Errorf("stats %+v, want %+v", *st, wantSt)
	}
}

// ns converts a JSON number of microseconds to integer ns with exact
// rational arithmetic, rounding half away from zero: independent of the
// parser's digit-by-digit reader.
func ns(t *testing.T, n json.Number) int64 {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).CmpAbs(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(m.Sign())))
	}
	return q.Int64()
}

// On a real trace, the slice holds exactly the events the rules keep,
// computed here from encoding/json's reading of the input.
func TestCopyRealTrace(t *testing.T) {
	data, err := os.ReadFile("../testdata/traces/torch/hta_ns_resolution.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	start, err := Start(opener(data))
	if err != nil {
		t.Fatal(err)
	}
	from, to := start+200_000_000, start+300_000_000 // 200 ms to 300 ms
	var out bytes.Buffer
	st, err := Copy(opener(data), Window(from, to), &out)
	if err != nil {
		t.Fatal(err)
	}

	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(zr)
	dec.UseNumber()
	var full map[string]json.RawMessage
	if err := dec.Decode(&full); err != nil {
		t.Fatal(err)
	}
	var events []map[string]any
	d2 := json.NewDecoder(bytes.NewReader(full["traceEvents"]))
	d2.UseNumber()
	if err := d2.Decode(&events); err != nil {
		t.Fatal(err)
	}
	canon := func(e map[string]any) string {
		b, _ := json.Marshal(e)
		return string(b)
	}
	var want []string
	minTS := int64(1<<63 - 1)
	type flow struct {
		evs         []string
		start, done bool
	}
	flows := map[string]*flow{}
	var flowKeys []string
	for _, e := range events {
		ph, _ := e["ph"].(string)
		tsn, hasTS := e["ts"].(json.Number)
		if ph == "M" {
			want = append(want, canon(e))
			continue
		}
		if !hasTS {
			continue
		}
		ts := ns(t, tsn)
		if cat, _ := e["cat"].(string); cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" {
			minTS = min(minTS, ts) // the zero point: the first GPU activity
		}
		end := ts
		if d, ok := e["dur"].(json.Number); ok && ns(t, d) > 0 {
			end += ns(t, d)
		}
		if ph == "s" || ph == "f" || ph == "t" {
			if ts < from || ts > to {
				continue
			}
			k := e["cat"].(string) + "/" + string(e["id"].(json.Number))
			f := flows[k]
			if f == nil {
				f = &flow{}
				flows[k] = f
				flowKeys = append(flowKeys, k)
			}
			f.evs = append(f.evs, canon(e))
			f.start = f.start || ph == "s"
			f.done = f.done || ph == "f"
			continue
		}
		if ts >= from && end <= to {
			want = append(want, canon(e))
		}
	}
	nflows := 0
	for _, k := range flowKeys {
		if f := flows[k]; f.start && f.done {
			want = append(want, f.evs...)
			nflows += len(f.evs)
		}
	}
	if minTS != start {
		t.Errorf("Start = %d, want %d", start, minTS)
	}

	var sliced map[string]json.RawMessage
	d3 := json.NewDecoder(bytes.NewReader(out.Bytes()))
	d3.UseNumber()
	if err := d3.Decode(&sliced); err != nil {
		t.Fatalf("slice is not JSON: %v", err)
	}
	var gotEvents []map[string]any
	d4 := json.NewDecoder(bytes.NewReader(sliced["traceEvents"]))
	d4.UseNumber()
	if err := d4.Decode(&gotEvents); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range gotEvents {
		got = append(got, canon(e))
	}
	if len(want) < 1000 || nflows == 0 {
		t.Fatalf("the window holds %d events and %d flow events: pick a busier one", len(want), nflows)
	}
	if !slices.Equal(got, want) {
		t.Errorf("slice holds %d events, want %d", len(got), len(want))
		slices.Sort(got)
		slices.Sort(want)
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("first difference:\n got  %s\n want %s", got[i], want[i])
			}
		}
	}
	if st.Kept != int64(len(want)) || st.Flows != int64(nflows) || st.Read != int64(len(events)) {
		t.Errorf("stats %+v; want kept %d, flows %d, read %d", *st, len(want), nflows, len(events))
	}
	for k, v := range full {
		if k == "traceEvents" {
			continue
		}
		if !bytes.Equal(sliced[k], v) {
			t.Errorf("top-level %q = %.60s, want %.60s", k, sliced[k], v)
		}
	}
	if len(sliced) != len(full) {
		t.Errorf("%d top-level keys, want %d", len(sliced), len(full))
	}
	// The slice is a trace traceq reads, with the window's kernels.
	tr, err := chrometrace.Parse(bytes.NewReader(out.Bytes()), chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Activities) == 0 {
		t.Errorf("slice parses to %d activities", len(tr.Activities))
	}
	for _, a := range tr.Activities {
		if int64(a.Start) < from || int64(a.End()) > to {
			t.Fatalf("activity %s [%d, %d] outside the window", tr.Name(a.Name), a.Start, a.End())
		}
	}
	whole, err := chrometrace.Parse(bytes.NewReader(data), chrometrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Meta.Rank != whole.Meta.Rank || !slices.Equal(tr.Meta.Devices, whole.Meta.Devices) || len(whole.Meta.Devices) == 0 {
		t.Errorf("metadata lost: rank %d, %d devices; want %d, %d", tr.Meta.Rank, len(tr.Meta.Devices), whole.Meta.Rank, len(whole.Meta.Devices))
	}
}

// A trace cut short (a killed profiler) still slices: the slice holds the
// complete events before the cut, closes properly, and says so.
func TestCopyTruncated(t *testing.T) {
	const in = `{"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}},
{"ph":"X","name":"a","ts":10,"dur":1},
{"ph":"X","cat":"kernel","name":"b","ts":12,"dur":1},
{"ph":"X","name":"c","ts":1`
	start, err := Start(opener([]byte(in)))
	if err != nil || start != 12_000 {
		t.Fatalf("Start = %d, %v", start, err)
	}
	var out bytes.Buffer
	st, err := Copy(opener([]byte(in)), Window(0, 100_000), &out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct{ Name string } `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("slice of a truncated trace is not JSON: %v\n%s", err, out.String())
	}
	if len(doc.TraceEvents) != 3 || st.Kept != 3 || !strings.Contains(st.Truncated, "truncated") {
		t.Errorf("kept %d events (%+v), want process_name, a, b and a truncation note", len(doc.TraceEvents), *st)
	}
	if _, err := Copy(opener([]byte(`{"traceEvents":[{"ph":"X"} {"ph":"X"}]}`)), Window(0, 1), &out); err == nil {
		t.Error("malformed JSON sliced without an error")
	}
}

// TestTimeWindowNearLimits: --time windows on traces whose timestamps lie
// near the int64 limits (in ns) hold their bounds there instead of
// wrapping round: on a trace near the lowest time, 0:150 µs once became
// the whole trace; an event whose end passes the largest time ends there.
func TestTimeWindowNearLimits(t *testing.T) {
	events := func(base int64, extra string) []byte {
		var evs []string
		for i, k := range []struct{ off, dur int64 }{{0, 100}, {200, 100}, {400, 300}} {
			evs = append(evs, fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":%d,"args":{"device":0,"stream":7,"correlation":%d}}`, i, base+k.off, k.dur, i+1))
		}
		if extra != "" {
			evs = append(evs, extra)
		}
		return []byte(`{"traceEvents":[` + strings.Join(evs, ",") + `]}`)
	}
	const hi, lo = 9223372036854000, -9223372036854000 // µs: ns within 0.8 ms of the limits
	// Its end, 0.9 ms after the first kernel, is past the largest time.
	past := fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"past the end","pid":0,"tid":7,"ts":%d,"dur":200,"args":{"device":0,"stream":7,"correlation":9}}`, hi+700)
	for _, c := range []struct {
		name     string
		data     []byte
		from, to int64 // ns from the first kernel
		want     string
		toEnd    bool
	}{
		{"high 0:150", events(hi, ""), 0, 150_000, "k0", false},
		{"high 150:1000", events(hi, ""), 150_000, 1_000_000, "k1 k2", true},
		{"high 150:", events(hi, ""), 150_000, math.MaxInt64, "k1 k2", true},
		{"low 0:150", events(lo, ""), 0, 150_000, "k0", false},
		{"low 150:1000", events(lo, ""), 150_000, 1_000_000, "k1 k2", false},
		{"low 0:1", events(lo, ""), 0, 1_000, "", false},
		{"low 150:", events(lo, ""), 150_000, math.MaxInt64, "k1 k2", true},
		{"past the end 0:150", events(hi, past), 0, 150_000, "k0", false},
		{"past the end 150:", events(hi, past), 150_000, math.MaxInt64, "k1 k2 past the end", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			open := opener(c.data)
			start, err := Start(open)
			if err != nil {
				t.Fatal(err)
			}
			sel, toEnd := TimeWindow(start, c.from, c.to)
			var out bytes.Buffer
			if _, err := Copy(open, sel, &out); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				TraceEvents []struct{ Name string } `json:"traceEvents"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range doc.TraceEvents {
				got = append(got, e.Name)
			}
			slices.Sort(got)
			if strings.Join(got, " ") != c.want || toEnd != c.toEnd {
				t.Errorf("kept %q, to the end %v; want %q, %v", got, toEnd, c.want, c.toEnd)
			}
		})
	}
}
