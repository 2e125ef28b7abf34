package main

import (
	"fmt"
	"io"
	"time"
)

// progress reports bytes read of a file on a terminal, at most ten times a
// second, only once reading has taken longer than a second.
type progress struct {
	r     io.Reader
	size  int64
	done  int64
	w     io.Writer
	start time.Time
	last  time.Time
}

func newProgress(r io.Reader, size int64, w io.Writer) io.Reader {
	now := time.Now()
	return &progress{r: r, size: size, w: w, start: now, last: now}
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if now := time.Now(); now.Sub(p.start) > time.Second && now.Sub(p.last) > 100*time.Millisecond {
		p.last = now
		pct := 0.0
		if p.size > 0 {
			pct = float64(p.done) / float64(p.size) * 100
		}
		const width = 30
		fill := int(pct / 100 * width)
		fill = max(0, min(fill, width))
		bar := make([]byte, width)
		for i := range bar {
			if i < fill {
				bar[i] = '#'
			} else {
				bar[i] = '.'
			}
		}
		fmt.Fprintf(p.w, "\r\x1b[Ktraceq: [%s] %5.1f%% %d/%d MB", bar, pct, p.done>>20, p.size>>20)
	}
	return n, err
}
