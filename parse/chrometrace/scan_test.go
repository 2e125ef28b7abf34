package chrometrace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func gzipText(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

type scanned struct {
	events []string
	keys   []string
	vals   []string
}

func scanAll(data []byte) (scanned, error) {
	var s scanned
	err := Scan(bytes.NewReader(data), func(raw []byte) error {
		s.events = append(s.events, string(raw))
		return nil
	}, func(key string, raw []byte) error {
		s.keys = append(s.keys, key)
		s.vals = append(s.vals, string(raw))
		return nil
	})
	return s, err
}

func TestScan(t *testing.T) {
	const doc = `{"schemaVersion": 1, "deviceProperties": [{"id": 0}],
  "traceEvents": [ {"ph":"X","name":"a,]}","ts":1.5}, {"ph":"M","name":"process_name"} ,
  {"ph":"f","id":7}],
  "traceName": "x\"y", "n": 12 }`
	for _, tc := range []struct {
		name string
		data []byte
	}{{"plain", []byte(doc)}, {"gzip", gzipText(t, doc)}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scanAll(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			wantEv := []string{`{"ph":"X","name":"a,]}","ts":1.5}`, `{"ph":"M","name":"process_name"}`, `{"ph":"f","id":7}`}
			if strings.Join(s.events, "|") != strings.Join(wantEv, "|") {
				t.Errorf("events = %q, want %q", s.events, wantEv)
			}
			wantKeys := []string{"schemaVersion", "deviceProperties", "traceName", "n"}
			wantVals := []string{`1`, `[{"id": 0}]`, `"x\"y"`, `12`}
			if strings.Join(s.keys, "|") != strings.Join(wantKeys, "|") || strings.Join(s.vals, "|") != strings.Join(wantVals, "|") {
				t.Errorf("top = %q %q, want %q %q", s.keys, s.vals, wantKeys, wantVals)
			}
		})
	}
}

func TestScanErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc  string
		events     int
		truncated  bool
		wantSubstr string
	}{
		{name: "array format", doc: `[{"ph":"X"},{"ph":"B"}]`, events: 2},
		{name: "truncated", doc: `{"traceEvents":[{"ph":"X"},{"ph":"B"},{"ph"`, events: 2, truncated: true},
		{name: "not a trace", doc: `{"a":1}`, wantSubstr: "not a Chrome trace"},
		{name: "syntax", doc: `{"traceEvents":[{"ph":"X"} {"ph":"B"}]}`, events: 1, wantSubstr: "invalid JSON at byte"},
		{name: "empty", doc: ``, wantSubstr: "empty input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scanAll([]byte(tc.doc))
			if len(s.events) != tc.events {
				t.Errorf("%d events, want %d", len(s.events), tc.events)
			}
			if errors.Is(err, ErrTruncated) != tc.truncated {
				t.Errorf("err = %v, truncated want %v", err, tc.truncated)
			}
			if tc.wantSubstr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantSubstr)) {
				t.Errorf("err = %v, want it to say %q", err, tc.wantSubstr)
			}
			if tc.wantSubstr == "" && !tc.truncated && err != nil {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// A callback's error stops the scan: no event is handed over after it.
func TestScanStops(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := range 200000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"ph":"X","name":"k","ts":1}`)
	}
	b.WriteString(`]}`)
	stop := errors.New("stop")
	n := 0
	err := Scan(strings.NewReader(b.String()), func([]byte) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	}, nil)
	if err != stop || n != 10 {
		t.Errorf("err = %v after %d events, want stop after 10", err, n)
	}
}

// Scan sees every event of real traces; the counts were taken with
// Python's json module (len(doc["traceEvents"])).
func TestScanRealTraces(t *testing.T) {
	for _, tc := range []struct {
		file   string
		events int
		keys   int
	}{
		{"hta_ns_resolution.json.gz", 68692, 20},
		{"kineto2021_resnet50.json.gz", 75718, 2},
		{"vllm_decode_full_graph.json.gz", 1993, 14},
	} {
		data, err := os.ReadFile("../../testdata/traces/torch/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scanAll(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.events) != tc.events || len(s.keys) != tc.keys {
			t.Errorf("%s: %d events, %d top-level keys; want %d, %d", tc.file, len(s.events), len(s.keys), tc.events, tc.keys)
		}
	}
}

func TestReadEvent(t *testing.T) {
	var ev Event
	ReadEvent([]byte(`{"ph":"X","cat":"kernel","name":"k","pid":0,"ts":1712195495519695.812,"dur":"2.5",
		"args":{"correlation":"42","device":0},"id":"0x1f"}`), &ev)
	want := Event{Ph: "X", Cat: "kernel", Name: "k", TS: 1712195495519695812, Dur: 2500, HasTS: true, HasDur: true, Corr: 42, ID: `"0x1f"`}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("got %+v, want %+v", ev, want)
	}
	ReadEvent([]byte(` { "name" : "a\"b\u00e9" , "ph" : "X", "ts": -1.5e3, "args": {"x": {"correlation": 9}, "correlation": 4}, "dur": null }`), &ev)
	want = Event{Ph: "X", Name: "a\"bé", TS: -1500000, HasTS: true, Corr: 4}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("got %+v, want %+v", ev, want)
	}
	ReadEvent([]byte(`{"ph":"M","name":"thread_name"}`), &ev)
	if ev.HasTS || ev.HasDur || ev.Corr != 0 || ev.Ph != "M" {
		t.Errorf("metadata event: got %+v", ev)
	}
}

// ReadEvent agrees with encoding/json on every event of a real trace.
func TestReadEventReal(t *testing.T) {
	data, err := os.ReadFile("../../testdata/traces/torch/vllm_mixed_piecewise.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = Scan(bytes.NewReader(data), func(raw []byte) error {
		var ref struct {
			Ph, Cat, Name string
			TS, Dur       *json.Number
			ID            json.RawMessage
			Args          struct {
				Correlation *json.Number `json:"correlation"`
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&ref); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var ev Event
		ReadEvent(raw, &ev)
		var corr int64
		if ref.Args.Correlation != nil {
			corr, _ = ref.Args.Correlation.Int64()
		}
		if ev.Ph != ref.Ph || ev.Cat != ref.Cat || ev.Name != ref.Name || ev.HasTS != (ref.TS != nil) ||
			ev.HasDur != (ref.Dur != nil) || ev.ID != string(ref.ID) || ev.Corr != corr {
			t.Fatalf("%s: got %+v", raw, ev)
		}
		if ref.TS != nil {
			if want, _ := ParseMicros(string(*ref.TS)); want != ev.TS {
				t.Fatalf("%s: ts %d, want %d", raw, ev.TS, want)
			}
		}
		n++
		return nil
	}, nil)
	if err != nil || n < 1000 {
		t.Fatalf("%d events, %v", n, err)
	}
}

// ScanParallel hands over the events in file order with their verdicts,
// whatever the number of workers, and stops at emit's first error.
func TestScanParallel(t *testing.T) {
	data, err := os.ReadFile("../../testdata/traces/torch/kineto2021_resnet50.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := scanAll(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 7} {
		var got []string
		var keys []string
		err := ScanParallel(bytes.NewReader(data), workers, func(raw []byte) int { return len(raw) },
			func(raw []byte, n int) error {
				if n != len(raw) {
					t.Fatalf("verdict %d for an event of %d bytes", n, len(raw))
				}
				got = append(got, string(raw))
				return nil
			}, func(key string, raw []byte) error {
				keys = append(keys, key)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ref.events) || !slices.Equal(keys, ref.keys) {
			t.Errorf("%d workers: %d events, keys %q; want %d, %q", workers, len(got), keys, len(ref.events), ref.keys)
		}
		stop := errors.New("stop")
		n := 0
		err = ScanParallel(bytes.NewReader(data), workers, func(raw []byte) bool { return true },
			func(raw []byte, _ bool) error {
				n++
				if n == 5000 {
					return stop
				}
				return nil
			}, nil)
		if err != stop || n != 5000 {
			t.Errorf("%d workers: err %v after %d events, want stop after 5000", workers, err, n)
		}
	}
}
