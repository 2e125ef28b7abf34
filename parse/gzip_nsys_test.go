package parse

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGzippedNsys reads an nsys export compressed with gzip and checks it
// gives the same model as the plain file.
func TestGzippedNsys(t *testing.T) {
	src := "../testdata/traces/nsys/nsys2022.1.3_dlprof-rtx2070-cudnn.sqlite"
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	gzPath := filepath.Join(t.TempDir(), "export.sqlite.gz")
	f, err := os.Create(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(raw)
	zw.Close()
	f.Close()

	plain, err := File(src, Options{})
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
	// A gzipped file that is not an export names the user's file.
	bad := filepath.Join(t.TempDir(), "bad.sqlite.gz")
	f, _ = os.Create(bad)
	zw = gzip.NewWriter(f)
	zw.Write([]byte("SQLite format 3\x00 but not a database"))
	zw.Close()
	f.Close()
	_, err = File(bad, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), bad+": ") || strings.Contains(err.Error(), "traceq-") {
		t.Fatalf("error = %v, want one naming %s and not the temporary copy", err, bad)
	}
}

func TestExpandDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.json.gz", "a.json", "c.sqlite.gz", "notes.txt", "d.sqlite"} {
		os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644)
	}
	got, err := Expand([]string{dir, "x.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.json", "b.json.gz", "c.sqlite.gz", "d.sqlite"}
	if len(got) != 5 || got[4] != "x.json" {
		t.Fatalf("Expand = %v", got)
	}
	for i, w := range want {
		if filepath.Base(got[i]) != w {
			t.Errorf("Expand[%d] = %s, want %s", i, got[i], w)
		}
	}
	if _, err := Expand([]string{t.TempDir()}); err == nil {
		t.Error("Expand of an empty directory: want an error")
	}
}
