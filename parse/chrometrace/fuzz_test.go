package chrometrace

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// torchDir holds the real traces shared by the tests (see its README.md).
const torchDir = "../../testdata/traces/torch"

// readTrace returns the decompressed content of a testdata trace.
func readTrace(tb testing.TB, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(torchDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	if !IsGzip(raw) {
		return raw
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzParse checks that no input makes Parse panic, that every trace it
// returns is valid, that the parallel path (two workers, blocks so small
// that events straddle them) gives exactly the sequential result, that
// speculative chunks give the splitter's result, and that a Reader's
// records are Parse's.
//
// The committed corpus in testdata/fuzz/FuzzParse holds small real traces,
// slices of the big ones and hand-written odd cases; f.Add adds the small
// traces as they are on disk (gzip included).
func FuzzParse(f *testing.F) {
	for _, path := range []string{filepath.Join(torchDir, "hta_legacy_minimal.json.gz"), filepath.Join(torchDir, "hta_triton.json.gz"),
		filepath.Join(torchDir, "hta_cpu_only.json.gz"), collectivesCut} {
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	// A gzip header with a stored name longer than compress/gzip reads.
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name = strings.Repeat("n", 600)
	zw.Write([]byte(`{"traceEvents": [` + ev1 + `]}`))
	zw.Close()
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		// 64 KiB blocks rather than the default 4 MiB, which cost
		// 17.7 ms a Parse of a 12 kB trace against 0.4 ms (measured).
		seq, serr := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: 1 << 16})
		par, perr := Parse(bytes.NewReader(data), Options{Workers: 2, BlockSize: 61})
		if (serr == nil) != (perr == nil) || (serr != nil && serr.Error() != perr.Error()) {
			t.Fatalf("sequential error %v, parallel error %v", serr, perr)
		}
		split, xerr := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: 1 << 16, NoChunks: true})
		if (serr == nil) != (xerr == nil) || (serr != nil && serr.Error() != xerr.Error()) {
			t.Fatalf("chunks error %v, splitter error %v", serr, xerr)
		}
		if !reflect.DeepEqual(seq, split) {
			t.Fatalf("chunks and the splitter give different traces:\nchunks   %+v\nsplitter %+v", seq, split)
		}
		sameAsParse(t, "input", data)
		if serr != nil {
			if seq != nil {
				t.Fatalf("error %v returned with a trace", serr)
			}
			return
		}
		if err := seq.CheckValid(); err != nil {
			t.Fatalf("invalid trace: %v", err)
		}
		if !reflect.DeepEqual(seq, par) {
			t.Fatalf("parallel trace differs from sequential:\nseq %+v\npar %+v", seq, par)
		}
	})
}
