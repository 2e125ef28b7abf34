package chrometrace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
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
// speculative chunks give the splitter's result, that the key cache
// changes nothing (generalKeys), and that a Reader's records are Parse's.
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
		generalKeys = true
		gen, gerr := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: 1 << 16})
		generalKeys = false
		if (serr == nil) != (gerr == nil) || (serr != nil && serr.Error() != gerr.Error()) || !reflect.DeepEqual(seq, gen) {
			t.Fatalf("the key cache changes the parse: error %v, without it %v", serr, gerr)
		}
		split, xerr := Parse(bytes.NewReader(data), Options{Workers: 1, BlockSize: 1 << 16, NoChunks: true})
		if (serr == nil) != (xerr == nil) || (serr != nil && serr.Error() != xerr.Error()) {
			t.Fatalf("chunks error %v, splitter error %v", serr, xerr)
		}
		if !reflect.DeepEqual(seq, split) {
			t.Fatalf("chunks and the splitter give different traces:\nchunks   %+v\nsplitter %+v", seq, split)
		}
		if !IsGzip(data) {
			// Read in place (a mapped file), in chunks and through the
			// splitter; a copy of its own, which Parse must not write.
			own := bytes.Clone(data)
			for _, opt := range []Options{{Workers: 2, BlockSize: 61, Data: own}, {Workers: 1, BlockSize: 1 << 16, NoChunks: true, Data: own}} {
				got, err := Parse(nil, opt)
				if (serr == nil) != (err == nil) || (serr != nil && serr.Error() != err.Error()) || !reflect.DeepEqual(seq, got) {
					t.Fatalf("read in place (chunks %v): error %v, read %v", !opt.NoChunks, err, serr)
				}
			}
			if !bytes.Equal(own, data) {
				t.Fatal("reading in place wrote the data")
			}
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

// FuzzOpSig checks that decoding an op's recorded shapes (the raw text of
// "Input Dims", "Input type", "Concrete Inputs" and "Input Strides", as
// the decoder keeps them) never panics, gives one argument per recorded
// entry, and that the whole parse of an op event with those args is
// valid.
func FuzzOpSig(f *testing.F) {
	f.Add(`[[640], [888, 2880], [2880, 640], [], []]`, `["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]`, `["", "", "", "1", "1"]`, `[[1], [2880, 1], [1, 2880], [], []]`)
	f.Add(`[[[5, 128], [5, 128]]]`, `["TensorList"]`, `[""]`, `[]`)
	f.Add(`[1, "x", {}, [[]]]`, `[1, [2]]`, `[null]`, `[[-1, 9999999999999999999]]`)
	f.Add(``, `[`, `]`, `[[`)
	f.Fuzz(func(t *testing.T, dims, types, concrete, strides string) {
		in := trace.NewInterner()
		key := string(appendSigKey(nil, "aten::op", dims, types, concrete, strides))
		sig := buildSig(key, in.ID)
		n := max(len(elems(dims)), len(elems(types)), len(elems(concrete)), len(elems(strides)))
		if len(sig.Args) != n || int(sig.Name) >= in.Len() {
			t.Fatalf("%d arguments for %d entries; name %d of %d", len(sig.Args), n, sig.Name, in.Len())
		}
		for _, a := range sig.Args {
			if int(a.Type) >= in.Len() || int(a.Value) >= in.Len() {
				t.Fatalf("argument %+v: name out of range", a)
			}
		}
		ev := `{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::op", "pid": 1, "tid": 1, "ts": 1, "dur": 9, "args": {"External id": 5, "Input Dims": ` +
			orNull(dims) + `, "Input type": ` + orNull(types) + `}}, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"External id": 5, "correlation": 3}}, ` +
			`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {"External id": 5, "device": 0, "stream": 7, "correlation": 3}}]}`
		tr, err := Parse(strings.NewReader(ev), Options{})
		if err == nil {
			if err := tr.CheckValid(); err != nil {
				t.Fatalf("invalid trace: %v", err)
			}
		}
	})
}

// orNull is s, or null when s is not one JSON value the splitter takes.
func orNull(s string) string {
	if s == "" || !json.Valid([]byte(s)) {
		return "null"
	}
	return s
}
