package load

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// TestProgressOnlyWhenAsked loads the same multi-file run with a progress
// writer (a terminal) and without: the progress line (drawn at once here,
// not after a second) appears only in the first case, and is cleared
// before the loader returns.
func TestProgressOnlyWhenAsked(t *testing.T) {
	defer func(d, t time.Duration) { progressDelay, progressTick = d, t }(progressDelay, progressTick)
	progressDelay, progressTick = 0, time.Millisecond
	for _, tty := range []bool{false, true} {
		var errb bytes.Buffer
		opt := Options{Steps: true, Warnings: &errb}
		if tty {
			opt.Progress = &errb
		}
		tbl, err := Load([]string{"../testdata/traces/torch/dlrm8"}, opt)
		if err != nil {
			t.Fatal(err)
		}
		got := errb.String()
		switch {
		case !tty && got != "":
			t.Errorf("no progress writer, yet the loader wrote %q", got)
		case tty && !strings.HasSuffix(got, "\r\x1b[K"):
			t.Errorf("progress line not cleared at the end: %q", got)
		case tty && !strings.Contains(got, "traceq: ["):
			t.Errorf("terminal output %q holds no progress line", got)
		}
		if len(tbl.Inputs) != 8 {
			t.Errorf("tty=%v: %d inputs", tty, len(tbl.Inputs))
		}
	}
}

// TestProgressLine checks the status line for files waiting, being read
// and done.
func TestProgressLine(t *testing.T) {
	p := newProgress(io.Discard, []string{"/x/rank0.json.gz", "/x/rank1.json.gz", "/x/rank2.json.gz"})
	for i, f := range p.files {
		f.size = int64(i+1) << 20 * 10 // 10, 20, 30 MB
	}
	p.finish(0)
	p.counter(1)(5 << 20)
	got := p.line()
	want := "traceq: [#####...............] 15/60 MB · 1 of 3 files done · reading rank1.json.gz 25%"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
