package chrometrace

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestGzipFilledBlocks: the decompressor fills the splitter's blocks
// (readAhead.take, splitter.moreFilled), and whatever the block size,
// events longer than a block's headroom and longer than a block (copied
// into blocks of their own) read as they do from the plain JSON.
func TestGzipFilledBlocks(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schemaVersion": 1, "traceEvents": [`)
	for i := range 60 {
		if i > 0 {
			b.WriteString(",\n")
		}
		name := fmt.Sprintf("kernel_%d", i%7)
		pad := ""
		switch i % 20 {
		case 3:
			name = strings.Repeat("n", 3*aheadHead) // past the headroom
		case 11:
			pad = strings.Repeat("x", 5<<20) // past a block
		}
		fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": %q, "pid": 0, "tid": 7, "ts": %d.5, "dur": 2,`+
			` "args": {"device": 0, "stream": 7, "correlation": %d, "pad": %q, "grid": [1, 2, 3]}}`, name, 10*i, i+1, pad)
	}
	b.WriteString(`], "baseTimeNanoseconds": 1700000000000000000}`)
	plain := []byte(b.String())
	want, err := Parse(bytes.NewReader(plain), Options{Workers: 1, BlockSize: len(plain) + 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Activities) != 60 {
		t.Fatalf("%d activities, want 60", len(want.Activities))
	}
	z := gzipOf(t, plain)
	for _, opt := range []Options{{Workers: 1, BlockSize: 97}, {Workers: 2, BlockSize: 64 << 10},
		{Workers: 3, BlockSize: 1 << 20}, {}, {Workers: 2, NoChunks: true}, {Workers: 1, BlockSize: 4096, NoChunks: true}} {
		got, err := Parse(bytes.NewReader(z), opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: the .gz reads as another trace than the JSON (%d activities)", opt, len(got.Activities))
		}
	}
}
