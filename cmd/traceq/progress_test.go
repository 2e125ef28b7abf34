package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// TestProgressOnlyOnTerminal runs the same multi-file breakdown with stderr
// taken for a terminal and not: the progress line (drawn at once here, not
// after a second) appears only in the first case, and is cleared before
// the result; without a terminal stderr stays empty.
func TestProgressOnlyOnTerminal(t *testing.T) {
	defer func(d, t time.Duration) { progressDelay, progressTick = d, t }(progressDelay, progressTick)
	progressDelay, progressTick = 0, time.Millisecond
	for _, tty := range []bool{false, true} {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, tty: tty}
		if err := newApp(e).Run([]string{"traceq", "breakdown", "--format", "json", dlrm8}); err != nil {
			t.Fatal(err)
		}
		got := errb.String()
		switch {
		case !tty && got != "":
			t.Errorf("stderr is not a terminal, yet traceq wrote %q", got)
		case tty && !strings.HasSuffix(got, "\r\x1b[K"):
			t.Errorf("progress line not cleared at the end: %q", got)
		case tty && !strings.Contains(got, "traceq: ["):
			t.Errorf("terminal output %q holds no progress line", got)
		}
		if out.Len() == 0 {
			t.Errorf("tty=%v: no result", tty)
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
	r := p.reader(1, strings.NewReader(strings.Repeat("x", 5<<20)), 0)
	io.Copy(io.Discard, r)
	got := p.line()
	want := "traceq: [#####...............] 15/60 MB · 1 of 3 files done · reading rank1.json.gz 25%"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
