package chrometrace

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// gzipOf compresses b.
func gzipOf(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

const (
	ev1 = `{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"correlation": 1}}`
	ev2 = `{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 20, "dur": 3, "args": {"correlation": 2}}`
	ev3 = `{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5, "dur": 30}`
	// doc is a whole trace: metadata, three events, metadata after them.
	doc = `{"schemaVersion": 1, "traceEvents": [` + ev1 + `, ` + ev2 + `, ` + ev3 + `], "baseTimeNanoseconds": 1700000000000000000}`
)

// parseBoth parses b sequentially and in parallel with tiny blocks, and
// fails the test unless both give the same answer.
func parseBoth(t *testing.T, b []byte) (*trace.Trace, error) {
	t.Helper()
	seq, serr := Parse(bytes.NewReader(b), Options{Workers: 1})
	par, perr := Parse(bytes.NewReader(b), Options{Workers: 3, BlockSize: 37})
	if (serr == nil) != (perr == nil) || (serr != nil && serr.Error() != perr.Error()) {
		t.Fatalf("sequential error %v, parallel %v", serr, perr)
	}
	if !reflect.DeepEqual(seq, par) {
		t.Fatalf("parallel trace differs from sequential")
	}
	if serr == nil {
		if err := seq.CheckValid(); err != nil {
			t.Fatalf("invalid trace: %v", err)
		}
	}
	return seq, serr
}

// TestBadInputErrors lists the inputs Parse refuses, with the exact error.
func TestBadInputErrors(t *testing.T) {
	badCRC := gzipOf(t, []byte(doc))
	binary.LittleEndian.PutUint32(badCRC[len(badCRC)-8:], binary.LittleEndian.Uint32(badCRC[len(badCRC)-8:])^1)
	corrupt := gzipOf(t, []byte(strings.Repeat(doc[:len(doc)-1]+`, "pad": "`+strings.Repeat("x", 5000)+`"}`, 1)))
	// Block type 3 is invalid in deflate: set both type bits of the first
	// block header (byte 10, after the 10-byte gzip header).
	corrupt[10] |= 0x06
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "empty input"},
		{"whitespace", []byte(" \n\t "), "empty input"},
		{"not JSON", []byte("hello"), `invalid JSON at byte 0: expected a JSON object or array, found 'h'`},
		{"array of numbers", []byte(`[1, 2, 3]`), "not a Chrome trace: none of its 3 elements is an event (an object with a ph)"},
		{"events without ph", []byte(`{"traceEvents": [{"name": "a"}, 7]}`), "not a Chrome trace: none of its 2 elements is an event (an object with a ph)"},
		{"no traceEvents", []byte(`{"model": "x", "layers": [1, 2]}`), ErrNotTrace.Error()},
		{"traceEvents not an array", []byte(`{"traceEvents": {"ph": "X"}}`), "not a Chrome trace: traceEvents is not an array (byte 16)"},
		{"missing comma between events", []byte(`{"traceEvents": [` + ev1 + ` ` + ev2 + `]}`), "invalid JSON at byte " + itoa(len(`{"traceEvents": [`+ev1+` `)) + ": expected ',' or ']' between events, found '{'"},
		{"trailing comma between events", []byte(`{"traceEvents": [` + ev1 + `, ]}`), "invalid JSON at byte " + itoa(len(`{"traceEvents": [`+ev1+`, `)) + ": expected a value, found ']'"},
		{"missing comma at top level", []byte(`{"a": 1 "traceEvents": []}`), `invalid JSON at byte 8: expected ',' or '}' after a top-level value, found '"'`},
		{"key without colon", []byte(`{"traceEvents" []}`), `invalid JSON at byte 15: expected ':' after key "traceEvents"`},
		{"garbage after the document", []byte(doc + " }"), "invalid JSON at byte " + itoa(len(doc)+1) + ": unexpected '}' after the end of the document"},
		{"bad JSON in gzip", gzipOf(t, []byte(`{"traceEvents": [1 2]}`)), "invalid JSON at byte 19 of the decompressed data: expected ',' or ']' between events, found '2'"},
		{"gzip header cut", gzipOf(t, []byte(doc))[:7], "truncated: the file ends inside the gzip header, before any data"},
		{"gzip magic, bad header", []byte("\x1f\x8b\x09\x00\x00\x00\x00\x00\x00\x03"), "corrupt gzip header (the file starts like gzip but is not valid gzip)"},
		{"gzip checksum", badCRC, "corrupt gzip data: the checksum does not match (the file is damaged)"},
		{"corrupt deflate data", corrupt, "corrupt gzip data near byte 11 of the file, after 0 bytes of decompressed JSON"},
		{"cut before traceEvents", []byte(`{"schemaVersion": 1, "devi`), "truncated: the file ends at byte 26, before the traceEvents array"},
		{"gzip cut before traceEvents", gzipOf(t, []byte(`{"schemaVersion": 1, "devi`))[:20], "truncated: the gzip stream ends early, after 9 bytes of decompressed JSON, before the traceEvents array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := parseBoth(t, tc.in)
			if err == nil {
				t.Fatalf("no error; trace with %d activities, truncated %+v", len(tr.Activities), tr.Truncated)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q\n want %q", err, tc.want)
			}
		})
	}
	// The sentinel and the type stay usable by callers.
	if _, err := Parse(strings.NewReader(`{"a": 1}`), Options{}); !errors.Is(err, ErrNotTrace) {
		t.Errorf("errors.Is(%v, ErrNotTrace) = false", err)
	}
	var se *SyntaxError
	if _, err := Parse(strings.NewReader(`{"traceEvents": [1 2]}`), Options{}); !errors.As(err, &se) || se.Offset != 19 || se.Gzip {
		t.Errorf("error %v: want a *SyntaxError at byte 19", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTruncation cuts doc at chosen places and checks what Parse keeps and
// how it describes the loss.
func TestTruncation(t *testing.T) {
	at := func(s string) int { // the offset just past s's first occurrence in doc
		i := strings.Index(doc, s)
		if i < 0 {
			t.Fatalf("%q not in doc", s)
		}
		return i + len(s)
	}
	end1 := at(ev1)
	end3 := at(ev3)
	tests := []struct {
		name   string
		cut    int
		events int64 // complete events kept
		acts   int   // GPU activities among them
		reason string
	}{
		{"inside the first event", at(`"cat": "ker`), 0, 0, "the file ends at byte " + itoa(at(`"cat": "ker`)) + ", before the first complete event"},
		{"right after the first event", end1, 1, 1, "the file ends at byte " + itoa(end1) + ", right after a complete event; whatever followed was lost"},
		{"after the comma", end1 + 1, 1, 1, "the file ends at byte " + itoa(end1+1) + "; the 1 bytes after the last complete event (which ends at byte " + itoa(end1) + ") were lost, with whatever followed"},
		{"inside a name string", at(`"name": "k2`) - 1, 1, 1, "the file ends at byte " + itoa(at(`"name": "k2`)-1) + "; the " + itoa(at(`"name": "k2`)-1-end1) + " bytes after the last complete event (which ends at byte " + itoa(end1) + ") were lost, with whatever followed"},
		{"inside a number", at(`"ts": 2`), 1, 1, "the file ends at byte " + itoa(at(`"ts": 2`)) + "; the " + itoa(at(`"ts": 2`)-end1) + " bytes after the last complete event (which ends at byte " + itoa(end1) + ") were lost, with whatever followed"},
		{"after the last event", end3, 3, 2, "the file ends at byte " + itoa(end3) + ", right after a complete event; whatever followed was lost"},
		{"after the array", end3 + 1, 3, 2, "the file ends at byte " + itoa(end3+1) + ", after the traceEvents array (which ends at byte " + itoa(end3+1) + "): every event was read, only metadata after it was lost"},
		{"inside the closing metadata", at(`"baseTimeNano`), 3, 2, "the file ends at byte " + itoa(at(`"baseTimeNano`)) + ", after the traceEvents array (which ends at byte " + itoa(end3+1) + "): every event was read, only metadata after it was lost"},
		{"before the final brace", len(doc) - 1, 3, 2, "the file ends at byte " + itoa(len(doc)-1) + ", after the traceEvents array (which ends at byte " + itoa(end3+1) + "): every event was read, only metadata after it was lost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := parseBoth(t, []byte(doc[:tc.cut]))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Truncated == nil {
				t.Fatal("not marked truncated")
			}
			if tr.Truncated.Offset != int64(tc.cut) || tr.Truncated.Events != tc.events || len(tr.Activities) != tc.acts {
				t.Errorf("offset %d, %d events, %d activities; want %d, %d, %d",
					tr.Truncated.Offset, tr.Truncated.Events, len(tr.Activities), tc.cut, tc.events, tc.acts)
			}
			if tr.Truncated.Reason != tc.reason {
				t.Errorf("reason %q\n  want %q", tr.Truncated.Reason, tc.reason)
			}
		})
	}
	t.Run("byte order mark", func(t *testing.T) {
		for _, in := range [][]byte{[]byte("\xef\xbb\xbf" + doc), gzipOf(t, []byte("\xef\xbb\xbf"+doc))} {
			tr, err := parseBoth(t, in)
			if err != nil || tr.Truncated != nil || len(tr.Activities) != 2 {
				t.Fatalf("err %v, truncated %+v", err, tr)
			}
		}
		// Offsets stay those of the file, BOM included.
		_, err := parseBoth(t, []byte("\xef\xbb\xbf{\"traceEvents\": [1 2]}"))
		if want := "invalid JSON at byte 22: expected ',' or ']' between events, found '2'"; err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	})
	t.Run("whole document", func(t *testing.T) {
		tr, err := parseBoth(t, []byte(doc+"\n"))
		if err != nil || tr.Truncated != nil || len(tr.Activities) != 2 {
			t.Fatalf("err %v, truncated %+v, %d activities", err, tr.Truncated, len(tr.Activities))
		}
	})
}

// TestGzipEnds covers the ways a gzip stream can end: cut in the data, cut
// in the 8-byte trailer, followed by bytes that are not gzip.
func TestGzipEnds(t *testing.T) {
	z := gzipOf(t, []byte(doc))
	t.Run("cut in the data", func(t *testing.T) {
		tr, err := parseBoth(t, z[:len(z)-20])
		if err != nil {
			t.Fatal(err)
		}
		if tr.Truncated == nil || !strings.HasPrefix(tr.Truncated.Reason, "the gzip stream ends early, after ") {
			t.Fatalf("truncated %+v", tr.Truncated)
		}
	})
	t.Run("cut in the trailer", func(t *testing.T) {
		// Every event is there; only the checksum cannot be checked,
		// as for any plain JSON file.
		tr, err := parseBoth(t, z[:len(z)-4])
		if err != nil || tr.Truncated != nil || len(tr.Activities) != 2 {
			t.Fatalf("err %v, truncated %+v, %d activities", err, tr.Truncated, len(tr.Activities))
		}
	})
	t.Run("trailing garbage", func(t *testing.T) {
		for _, tail := range []string{"\x00\x00\x00\x00", strings.Repeat("\x00", 512)} {
			tr, err := parseBoth(t, append(append([]byte(nil), z...), tail...))
			if err != nil || tr.Truncated != nil || len(tr.Activities) != 2 {
				t.Fatalf("%d bytes: err %v, truncated %+v", len(tail), err, tr.Truncated)
			}
		}
	})
	t.Run("two members", func(t *testing.T) {
		// gzip -c a b > ab: one document split over two members.
		half := len(doc) / 2
		two := append(gzipOf(t, []byte(doc[:half])), gzipOf(t, []byte(doc[half:]))...)
		tr, err := parseBoth(t, two)
		if err != nil || tr.Truncated != nil || len(tr.Activities) != 2 {
			t.Fatalf("err %v, truncated %+v", err, tr.Truncated)
		}
	})
}

// TestManyAnomalyKinds checks that junk with a new unknown phase in every
// event is read in linear time and lists a bounded number of kinds, the
// same whatever the batching.
func TestManyAnomalyKinds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	const n = 20000
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"ph": "P` + itoa(i) + `"}`)
	}
	b.WriteString(`, ` + ev1 + `]}`)
	tr, err := parseBoth(t, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Anomalies) != maxAnomalyKinds+1 {
		t.Fatalf("%d kinds of anomaly, want %d", len(tr.Anomalies), maxAnomalyKinds+1)
	}
	var total int64
	var other *trace.Anomaly
	for i, a := range tr.Anomalies {
		total += a.Count
		if a.What == otherAnomalies {
			other = &tr.Anomalies[i]
		}
	}
	// Every junk event is one anomaly; ev1 is a valid kernel.
	if total != n || other == nil || other.Count != n-maxAnomalyKinds {
		t.Fatalf("%d anomalies, other kinds %+v", total, other)
	}
	if want := `unknown phase "P64" skipped: event 64 at byte `; !strings.HasPrefix(other.Example, want) {
		t.Errorf("example %q, want %q…", other.Example, want)
	}
}
