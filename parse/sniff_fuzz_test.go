package parse

import (
	"bytes"
	"testing"
)

// FuzzNotTrace checks that the directory sniffer never skips what the
// parser reads: whenever notTrace calls an input not a trace, reading it
// as a trace fails.
func FuzzNotTrace(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": 0, "stream": 7}}]}`,
		`[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": 0, "stream": 7}}]`,
		`[{"name": "x"}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}]`,
		`{"a": {"traceEvents": []}}`,
		`[{"file": "a.json.gz", "batch_size": 32}]`,
		`[[{"ph": "X"}]]`,
		`{"trace\u0045vents": []}`,
		"\ufeff[]",
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		why := notTrace(b)
		if why == "" {
			return
		}
		if tr, err := Read("fuzz", bytes.NewReader(b), Options{Workers: 1}); err == nil {
			t.Fatalf("notTrace says %q, yet it reads as a trace of %d activities", why, len(tr.Activities))
		}
	})
}
