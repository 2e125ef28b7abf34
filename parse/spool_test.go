package parse

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bomb returns a gzip file of members concatenated (which gzip readers
// read as one stream): SQLite's magic, then zeros, about 1000:1, so that
// size compressed bytes stand for about 1000 × size.
func bomb(t *testing.T, size int) []byte {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	zeros := member(make([]byte, 16<<20))
	out := member(append([]byte("SQLite format 3\x00"), make([]byte, 4080)...))
	for len(out) < size {
		out = append(out, zeros...)
	}
	return out
}

// TestGzipBomb: a 4 MB gzip file that decompresses to 4 GB stops at the
// cap (128 MiB: 32 × 4 MB) with a message saying what happened and what
// to do, and leaves no temporary file.
func TestGzipBomb(t *testing.T) {
	emptyTempDir(t)
	b := bomb(t, 4<<20)
	p := filepath.Join(t.TempDir(), "bomb.sqlite.gz")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := File(p, Options{})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	// The cap is on bytes read so far: the bomb's first megabytes stand
	// for far more than the floor, so it stops at the floor.
	want := fmt.Sprintf("%s: gzip data decompresses to more than %d MiB from ", p, minSpool>>20)
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "decompress it with gunzip and give the .sqlite") {
		t.Errorf("error %q\nwant  %q…", msg, want)
	}
}

// TestSpoolCapRatio: the cap grows with the compressed size, so an
// export bigger than the floor at a real ratio reads.
func TestSpoolCapRatio(t *testing.T) {
	tests := []struct {
		in, out int64
		ok      bool
	}{
		{1 << 20, minSpool, true},               // the floor
		{1 << 20, minSpool + 1, false},          // past the floor at 64:1
		{100 << 20, 700 << 20, true},            // a 700 MB export at 7:1
		{100 << 20, maxRatio * 100 << 20, true}, // at the ratio
		{100 << 20, maxRatio*100<<20 + 1, false},
	}
	for _, tc := range tests {
		c := &capped{r: bytes.NewReader(make([]byte, 1)), in: &counter{n: tc.in}, n: tc.out - 1}
		_, err := c.Read(make([]byte, 1))
		if ok := err == nil; ok != tc.ok {
			t.Errorf("%d bytes from %d compressed: error %v, want ok=%v", tc.out, tc.in, err, tc.ok)
		}
	}
}

// TestDamagedGzippedExport: a cut or damaged .sqlite.gz says so in the
// user's words, and removes its temporary file.
func TestDamagedGzippedExport(t *testing.T) {
	emptyTempDir(t)
	dir := t.TempDir()
	gz := readAll(t, gzipFile(t, dir, "x.sqlite.gz", readAll(t, smallExport)))
	bad := bytes.Clone(gz)
	bad[len(bad)-6] ^= 0xff // the CRC-32
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"cut", gz[:len(gz)/2], "truncated: the gzip data ends after "},
		{"checksum", bad, "corrupt gzip data: the checksum does not match (the file is damaged)"},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, tc.name+".sqlite.gz")
		os.WriteFile(p, tc.b, 0o644)
		_, err := File(p, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), p+": "+tc.want) {
			t.Errorf("%s: error %v\nwant %q…", tc.name, err, p+": "+tc.want)
		}
	}
}
