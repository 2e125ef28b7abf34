// Command model parses trace files and reports what the model of each
// holds: records, attribute tables and their bytes, and the live heap
// after a collection (the model and nothing else). It is how the memory
// cost of the attributes (issue 20) was measured:
//
//	go run ./bench/model FILE...
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/trace"
)

func main() {
	workers := flag.Int("workers", 0, "decoding goroutines per file (0: GOMAXPROCS)")
	flag.Parse()
	for _, p := range flag.Args() {
		before := liveHeap()
		t, err := parse.File(p, parse.Options{Workers: *workers})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		live := liveHeap() - before
		fmt.Printf("%s\n", p)
		row := func(what string, n int, size uintptr) uint64 {
			b := uint64(n) * uint64(size)
			fmt.Printf("  %-12s %10d × %3d B = %8.1f MB\n", what, n, size, float64(b)/1e6)
			return b
		}
		var attrs uint64
		row("activities", len(t.Activities), unsafe.Sizeof(trace.Activity{}))
		row("launches", len(t.Launches), unsafe.Sizeof(trace.Launch{}))
		row("ranges", len(t.Ranges), unsafe.Sizeof(trace.Range{}))
		attrs += row("attrs", len(t.Attrs), unsafe.Sizeof(trace.Attr{}))
		attrs += row("configs", len(t.Configs), unsafe.Sizeof(trace.Config{}))
		attrs += row("ops", len(t.Ops), unsafe.Sizeof(trace.Op{}))
		var sigBytes uint64
		for _, s := range t.OpSigs {
			sigBytes += uint64(unsafe.Sizeof(s))
			for _, a := range s.Args {
				sigBytes += uint64(unsafe.Sizeof(a)) + 8*uint64(len(a.Dims)+len(a.Strides))
				for _, l := range a.List {
					sigBytes += 24 + 8*uint64(len(l))
				}
			}
		}
		fmt.Printf("  %-12s %10d sigs        = %8.1f MB\n", "op sigs", len(t.OpSigs), float64(sigBytes)/1e6)
		attrs += sigBytes
		fmt.Printf("  attribute tables: %.1f MB; live heap of the model: %.1f MB (%.1f bytes per activity)\n",
			float64(attrs)/1e6, float64(live)/1e6, float64(live)/float64(max(len(t.Activities), 1)))
		runtime.KeepAlive(t)
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
