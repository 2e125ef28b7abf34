package chrometrace

import (
	"bytes"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// parseWays parses data through the splitter and in speculative chunks
// (one worker with small blocks, three with tiny ones), and checks that
// the three give the same trace or the same error. It returns the
// splitter's result and how many of the chunked reads gave up.
func parseWays(t *testing.T, name string, data []byte) (*traceOrErr, int64) {
	t.Helper()
	ref, rerr := Parse(bytes.NewReader(data), Options{Workers: 1, NoChunks: true})
	before := respeculated.Load()
	ways := []Options{{Workers: 1, BlockSize: 4 << 10}, {Workers: 3, BlockSize: 97}, {}}
	if !IsGzip(data) {
		// Read in place, as a mapped file is: in chunks and through
		// the splitter.
		ways = append(ways, Options{Data: data}, Options{Data: data, Workers: 3, BlockSize: 4 << 10},
			Options{Data: data, NoChunks: true, Workers: 2, BlockSize: 97})
	}
	for _, opt := range ways {
		var done *doneSet
		if opt.Data != nil {
			done = &doneSet{}
			opt.Done = done.add
		}
		got, gerr := Parse(bytes.NewReader(data), opt)
		if done != nil && gerr == nil {
			if err := done.covers(len(data)); err != nil {
				t.Fatalf("%s: read in place (blocks of %d bytes): %v", name, opt.BlockSize, err)
			}
		}
		if (rerr == nil) != (gerr == nil) || (rerr != nil && rerr.Error() != gerr.Error()) {
			t.Fatalf("%s: splitter error %v, chunks (%+v) error %v", name, rerr, opt, gerr)
		}
		if !reflect.DeepEqual(ref, got) {
			t.Fatalf("%s: chunks (%+v) give another trace than the splitter: %d/%d activities, %d/%d launches, %d/%d ranges, anomalies\n%v\n%v",
				name, opt, len(got.Activities), len(ref.Activities), len(got.Launches), len(ref.Launches), len(got.Ranges), len(ref.Ranges), got.Anomalies, ref.Anomalies)
		}
	}
	return &traceOrErr{rerr}, respeculated.Load() - before
}

type traceOrErr struct{ err error }

// fixtures returns the real traces of testdata: the torch ones, those of
// its run directories, and the cut collectives trace.
func fixtures(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(torchDir, "*.json*"))
	more, _ := filepath.Glob(filepath.Join(torchDir, "*", "*.json*"))
	files = append(append(files, more...), collectivesCut)
	if len(files) < 20 {
		t.Fatalf("%d fixtures found", len(files))
	}
	return files
}

// TestChunksAsSplitter: on every real fixture, whole and cut, and on
// generated traces, reading in speculative chunks gives the splitter's
// trace; the whole files take the fast path (no second read).
func TestChunksAsSplitter(t *testing.T) {
	for _, f := range fixtures(t) {
		data := readFile(t, f)
		if _, again := parseWays(t, f, data); again != 0 && f != collectivesCut {
			t.Errorf("%s: chunks gave up %d times", f, again)
		}
		parseWays(t, f+" cut", data[:len(data)*2/3])
	}
	synthJSON, _ := synth(3000, 1)
	if _, again := parseWays(t, "synth", synthJSON); again != 0 {
		t.Errorf("synth: chunks gave up %d times", again)
	}
}

// TestChunksGiveUp: where a guess is wrong or the input is odd, the
// chunks give up and the splitter's reading is the answer.
func TestChunksGiveUp(t *testing.T) {
	k := `{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 1}}`
	// A name holding what looks like an event start, many times, so
	// that tiny blocks are cut inside it.
	trap := strings.Repeat(`x}, {\"ph\": \"X\"`, 200)
	for _, tc := range []struct {
		name, doc string
		giveUp    bool
	}{
		{"event start inside a string", `{"traceEvents": [` + k + `, {"ph": "X", "cat": "kernel", "name": "` + trap + `", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 2}}, ` + k + `]}`, true},
		{"cut", `{"traceEvents": [` + k + `, ` + k[:50], true},
		{"syntax error", `{"traceEvents": [` + k + ` ` + k + `]}`, true},
		{"metadata after the events", `{"traceEvents": [` + k + `], "distributedInfo": {"rank": 3}, "traceName": "t"}`, false},
		{"error after the events", `{"traceEvents": [` + k + `], "x": 1 2}`, true},
		{"bare array", `[` + k + `, ` + k + `]`, false},
		{"empty array", `{"traceEvents": []}`, false},
		{"not events", `{"traceEvents": [1, 2, 3]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.doc)
			_, again := parseWays(t, tc.name, data)
			if again > 0 != tc.giveUp {
				t.Errorf("chunks gave up %d times (of 3 reads), want giving up: %v", again, tc.giveUp)
			}
		})
	}
}

// A stream cannot be read twice: it goes through the splitter.
func TestChunksNeedASecondRead(t *testing.T) {
	data, _ := synth(300, 0)
	before := respeculated.Load()
	ref, err := Parse(bytes.NewReader(data), Options{NoChunks: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(io.MultiReader(bytes.NewReader(data)), Options{})
	if err != nil || !reflect.DeepEqual(got, ref) || respeculated.Load() != before {
		t.Fatalf("a stream: %v", err)
	}
	// With Reopen, a failed guess reads the input again.
	var opens int
	bad := []byte(`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "name": "a}, {b"},`, 50) + `{"ph": "X"}]}`)
	_, err = Parse(io.MultiReader(bytes.NewReader(bad)), Options{BlockSize: 16, Reopen: func() (io.Reader, error) {
		opens++
		return bytes.NewReader(bad), nil
	}})
	if err != nil || opens != 1 {
		t.Fatalf("Reopen called %d times, err %v", opens, err)
	}
}
