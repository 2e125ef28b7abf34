package parse

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceq/traceq/outfile"
	"github.com/traceq/traceq/parse/nsyssqlite"
	"github.com/traceq/traceq/trace"
)

const (
	smallExport = "../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"
	torchDir    = "../testdata/traces/torch/"
)

// gzipFile writes b gzip-compressed to dir/name.
func gzipFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// emptyTempDir points TMPDIR at a new directory and checks, when the test
// ends, that it is empty and outfile tracks no temporary file.
func emptyTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		if es, _ := os.ReadDir(tmp); len(es) != 0 {
			t.Errorf("left %d files in TMPDIR, first %s", len(es), es[0].Name())
		}
		if n := outfile.Temps(); n != 0 {
			t.Errorf("outfile still tracks %d temporary files", n)
		}
	})
}

// nsysNamesPath reports whether nsyssqlite.Open still puts the path in
// its errors. parse now adds it (once, through FileError); the change
// that drops it from nsyssqlite is on another branch. Until both are
// merged, tests of the final message form skip.
func nsysNamesPath(t *testing.T) bool {
	p := filepath.Join(t.TempDir(), "probe.sqlite")
	os.WriteFile(p, []byte("not SQLite"), 0o644)
	_, err := nsyssqlite.Open(p, nsyssqlite.Options{})
	return err != nil && strings.Contains(err.Error(), p)
}

// TestGzippedNsys reads an nsys export compressed with gzip and checks it
// gives the same model as the plain file, leaving no temporary file.
func TestGzippedNsys(t *testing.T) {
	emptyTempDir(t)
	raw, err := os.ReadFile(smallExport)
	if err != nil {
		t.Fatal(err)
	}
	gzPath := gzipFile(t, t.TempDir(), "export.sqlite.gz", raw)
	plain, err := File(smallExport, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := File(gzPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gz.Activities) != len(plain.Activities) || len(gz.Launches) != len(plain.Launches) || len(gz.Ranges) != len(plain.Ranges) {
		t.Fatalf("gzipped: %d/%d/%d activities/launches/ranges, plain %d/%d/%d",
			len(gz.Activities), len(gz.Launches), len(gz.Ranges), len(plain.Activities), len(plain.Launches), len(plain.Ranges))
	}
	for i := range gz.Activities {
		a, b := gz.Activities[i], plain.Activities[i]
		if a.Start != b.Start || a.Dur != b.Dur || gz.Names[a.Name] != plain.Names[b.Name] {
			t.Fatalf("activity %d differs: %+v vs %+v", i, a, b)
		}
	}
}

// TestGzippedNsysErrors: the error for a gzipped export keeps its cause
// (errors.Is finds nsyssqlite's sentinel, which the text rewriting of the
// temporary name used to drop) and names the user's file once, never the
// temporary copy.
func TestGzippedNsysErrors(t *testing.T) {
	emptyTempDir(t)
	dir := t.TempDir()
	noKernels := noKernelsExport(t)
	tests := []struct {
		name string
		data []byte
		is   error
		want string
	}{
		{"not a database", []byte("SQLite format 3\x00 but not a database"), nil, "corrupt or truncated SQLite file"},
		{"no kernel table", noKernels, nsyssqlite.ErrNoKernels, "no CUDA kernel activity"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := gzipFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".sqlite.gz", tc.data)
			_, err := File(p, Options{})
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != p {
				t.Fatalf("error %v (%T), want a *FileError for %s", err, err, p)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			if nsysNamesPath(t) {
				t.Skip("adapt: nsyssqlite still names the (temporary) path; the final form holds once the nsys branch is merged")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, p+": ") || strings.Count(msg, p) != 1 || strings.Contains(msg, "traceq-") {
				t.Errorf("error %q, want %q once and no temporary name", msg, p+": …")
			}
		})
	}
}

// noKernelsExport returns a SQLite file with a StringIds table and no
// kernel table, as an export with CUDA tracing off.
func noKernelsExport(t *testing.T) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nokernels.sqlite")
	db, err := sql.Open("sqlite3", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNsysNoKernelsIs: errors.Is finds the sentinel through a plain
// export's error too.
func TestNsysNoKernelsIs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.sqlite")
	if err := os.WriteFile(p, noKernelsExport(t), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := File(p, Options{})
	if !errors.Is(err, nsyssqlite.ErrNoKernels) {
		t.Fatalf("error %v: want errors.Is ErrNoKernels", err)
	}
}

// TestAccept: Options.Accept hears each input's format before it is
// read, gzipped exports and streams included, and its error refuses the
// input, wrapped and named.
func TestAccept(t *testing.T) {
	errNo := errors.New("not this one")
	for _, tc := range []struct {
		path string
		want trace.Format
	}{
		{"../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite", trace.FormatNsys},
		{"../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-before.sqlite.gz", trace.FormatNsys},
		{"../testdata/traces/torch/hta_triton.json.gz", trace.FormatChrome},
		{"../testdata/traces/torch/dlrm_rank0_plain.json", trace.FormatChrome},
	} {
		var got []trace.Format
		opt := Options{Accept: func(f trace.Format) error { got = append(got, f); return errNo }}
		_, err := File(tc.path, opt)
		var fe *FileError
		if !errors.Is(err, errNo) || !errors.As(err, &fe) || fe.Path != tc.path || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %v, formats %v, want %s", tc.path, err, got, tc.want)
		}
		f, err := os.Open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		_, err = Read("standard input", f, opt)
		f.Close()
		if !errors.Is(err, errNo) || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s as a stream: %v, formats %v", tc.path, err, got)
		}
		// Accepted, the input is read as before.
		if _, err := File(tc.path, Options{Accept: func(trace.Format) error { return nil }}); err != nil {
			t.Errorf("%s accepted: %v", tc.path, err)
		}
	}
}
