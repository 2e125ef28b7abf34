package load

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// progressDelay is how long reading runs before the progress line shows
// (a variable for tests).
var progressDelay = time.Second

// progressTick is the redraw interval.
var progressTick = 100 * time.Millisecond

// progress shows, on a terminal, how far the reading of the input files
// has got: one status line with the overall share of bytes read and each
// file being read with its own share. It appears only once reading has
// taken longer than a second and is redrawn ten times a second by one
// goroutine, so several files parsed at once do not write over each other.
type progress struct {
	w     io.Writer
	start time.Time
	files []*fileProgress

	stopped chan struct{}
	exited  chan struct{}
	shown   bool
}

// fileProgress counts the bytes read of one file (its size on disk: for
// a .gz, compressed bytes).
type fileProgress struct {
	name    string
	size    int64
	read    atomic.Int64
	started atomic.Bool
	done    atomic.Bool
}

// newProgress tracks the files in paths. Call run to start drawing and
// stop when reading is over.
func newProgress(w io.Writer, paths []string) *progress {
	p := &progress{w: w, start: time.Now(), stopped: make(chan struct{}), exited: make(chan struct{})}
	for _, path := range paths {
		f := &fileProgress{name: filepath.Base(path)}
		if st, err := os.Stat(path); err == nil {
			f.size = st.Size()
		}
		p.files = append(p.files, f)
	}
	return p
}

// counter marks file i as being read, and returns what counts its bytes
// read.
func (p *progress) counter(i int) func(n int64) {
	f := p.files[i]
	f.started.Store(true)
	return func(n int64) { f.read.Add(n) }
}

// finish marks file i as read (or failed).
func (p *progress) finish(i int) { p.files[i].done.Store(true) }

// run draws until stop.
func (p *progress) run() {
	go func() {
		defer close(p.exited)
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		for {
			select {
			case <-p.stopped:
				return
			case now := <-tick.C:
				if now.Sub(p.start) >= progressDelay {
					p.draw()
				}
			}
		}
	}()
}

// stop ends drawing and clears the line.
func (p *progress) stop() {
	close(p.stopped)
	<-p.exited
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func (p *progress) draw() {
	fmt.Fprint(p.w, "\r\x1b[K"+p.line())
	p.shown = true
}

// line renders the status: the whole set, then each file being read.
func (p *progress) line() string {
	var read, size int64
	finished := 0
	var active []string
	for _, f := range p.files {
		r, s := f.read.Load(), f.size
		if f.done.Load() {
			finished++
			r = s
		} else if f.started.Load() {
			active = append(active, fmt.Sprintf("%s %s", f.name, pct(r, s)))
		}
		read += r
		size += s
	}
	const width = 20
	fill := 0
	if size > 0 {
		fill = int(min(read, size) * width / size)
	}
	bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
	s := fmt.Sprintf("traceq: [%s] %d/%d MB", bar, read>>20, size>>20)
	if len(p.files) > 1 {
		s += fmt.Sprintf(" · %d of %d files done", finished, len(p.files))
	}
	if len(active) > 0 {
		s += " · reading " + strings.Join(active, ", ")
	}
	return s
}

func pct(a, b int64) string {
	if b <= 0 {
		return "?%"
	}
	return fmt.Sprintf("%.0f%%", float64(a)*100/float64(b))
}
