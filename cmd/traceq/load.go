package main

import (
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/trace"
)

// memoryLimit is the soft limit set on the Go heap unless GOMEMLIMIT is
// set. Several GB of rank files parse into close to a GB of model (48
// bytes per kept activity); without a limit the collector lets the heap
// grow to twice what is live before collecting. Near the limit it collects
// more often instead, which costs little here: the model's big slices hold
// no pointers, so there is almost nothing to mark. Live data above the
// limit is still allowed (it is soft).
const memoryLimit = 900 << 20

func init() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// maxParallelFiles bounds the input files parsed at once. Each parse
// already uses every core; a second one in flight fills the gaps of the
// first (its gzip stream, its splitter and its final sort are single
// goroutines) while keeping memory to two files' working sets on top of
// the parsed traces.
const maxParallelFiles = 2

// parsed is the outcome of parsing one input file.
type parsed struct {
	t   *trace.Trace
	err error
}

// parseFiles parses paths concurrently, at most maxParallelFiles at a
// time, and returns a channel per file, in order, that delivers its
// outcome. Call the returned cancel when done: files not yet started are
// then skipped, and it waits for the parses in flight to end.
func parseFiles(e *env, paths []string, opt parse.Options) (outs []chan parsed, cancel func()) {
	var prog *progress
	if e.tty {
		prog = newProgress(e.stderr, paths)
		prog.run()
	}
	outs = make([]chan parsed, len(paths))
	for i := range outs {
		outs[i] = make(chan parsed, 1)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	sem := make(chan struct{}, min(maxParallelFiles, max(1, runtime.GOMAXPROCS(0))))
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, p := range paths {
			select {
			case sem <- struct{}{}:
			case <-quit:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				o := opt
				if prog != nil {
					o.Progress = func(r io.Reader, size int64) io.Reader { return prog.reader(i, r, size) }
				}
				t, err := readInput(e, p, o)
				if prog != nil {
					prog.finish(i)
				}
				outs[i] <- parsed{t, err}
			}()
		}
	}()
	var once sync.Once
	cancel = func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
			if prog != nil {
				prog.stop()
			}
		})
	}
	return outs, cancel
}

// readInput parses one input: a file, or standard input for "-".
func readInput(e *env, path string, opt parse.Options) (*trace.Trace, error) {
	if path != parse.Stdin {
		return parse.File(path, opt)
	}
	var in io.Reader = e.stdin
	if in == nil {
		in = strings.NewReader("")
	}
	return parse.Read(path, in, opt)
}
