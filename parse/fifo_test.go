//go:build unix

package parse

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fifo makes a FIFO at dir/name that serves data to its first reader.
func fifo(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
	return p
}

// TestFIFO: a FIFO named as input is read once, its format sniffed from
// the buffered reader (opening it a second time to sniff took data from
// the parser's stream, or waited for a writer that never came).
func TestFIFO(t *testing.T) {
	emptyTempDir(t)
	dir := t.TempDir()
	files := []string{
		torchDir + "sglang_decode.json.gz",
		torchDir + "dlrm_rank0_plain.json",
		smallExport,
		gzipFile(t, t.TempDir(), "export.sqlite.gz", readAll(t, smallExport)),
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			want, err := File(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := File(fifo(t, dir, filepath.Base(p), readAll(t, p)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			sameTrace(t, got, want)
		})
	}
}
