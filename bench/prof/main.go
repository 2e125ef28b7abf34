// Command prof reads trace files through the loader every command uses
// (package load: parallel parsing, runs, steps, the model checks) and runs
// the breakdown as traceq breakdown does, with CPU and heap profiles and
// phase timings: the tool the scale work was measured with.
//
//	go run ./bench/prof -cpuprofile cpu.prof FILE...
//	go tool pprof -top cpu.prof
//
// With -merge-steps A:B it runs traceq merge --steps A:B instead (both
// passes, the output discarded), with the same profiles and timings.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/merge"
	"github.com/traceq/traceq/parse"
	"github.com/traceq/traceq/slice"
	"github.com/traceq/traceq/window"
)

func main() {
	cpu := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	mem := flag.String("memprofile", "", "write a heap profile (after loading) to `FILE`")
	after := flag.String("afterprofile", "", "write a heap profile after the breakdown to `FILE` (its alloc_space shows what the analysis allocated)")
	workers := flag.Int("workers", 0, "decoding goroutines per file (0: GOMAXPROCS)")
	fullPass = flag.Bool("merge-full", false, "with -merge-steps: read every rank whole in the second pass (no chunk index)")
	repeat := flag.Int("repeat", 1, "load and break down the files `N` times (a small trace's profile gets enough samples)")
	mergeSteps := flag.String("merge-steps", "", "profile traceq merge --steps `A:B` (output discarded) instead of the breakdown")
	flag.Parse()
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	if *mergeSteps != "" {
		profMerge(*mergeSteps, *workers)
		return
	}
	loadAll := func(warnings io.Writer) *window.Table {
		tbl, err := load.Load(flag.Args(), load.Options{Parse: parse.Options{Workers: *workers}, Steps: true, Warnings: warnings})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return tbl
	}
	for range *repeat - 1 {
		tbl := loadAll(io.Discard)
		analyze.Breakdown(tbl, analyze.Options{})
		analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true})
	}
	tbl := loadAll(os.Stderr)
	// The models are gone once loaded: what the table keeps of them.
	var acts, colls, durBytes int
	for _, in := range tbl.Inputs {
		acts += in.Activities
		colls += len(in.Collectives.Kernels)
		for i := range in.Durations {
			durBytes += in.Durations[i].Bytes()
		}
	}
	fmt.Fprintf(os.Stderr, "loaded %d inputs in %v: %d activities, %d windows, %d collective kernels, %d bytes of durations\n",
		len(tbl.Inputs), time.Since(t0).Round(time.Millisecond), acts, len(tbl.Windows), colls, durBytes)
	if *mem != "" {
		f, err := os.Create(*mem)
		if err == nil {
			runtime.GC()
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	t3 := time.Now()
	analyze.Breakdown(tbl, analyze.Options{})
	analyze.Kernels(tbl, analyze.KernelOptions{MemOps: true})
	fmt.Fprintf(os.Stderr, "breakdown in %v; total %v\n", time.Since(t3).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	if *after != "" {
		f, err := os.Create(*after)
		if err == nil {
			runtime.GC() // the profile is as of the last collection
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
}

var fullPass *bool

// profMerge runs both passes of a merge of the steps spec selects over
// the files named, the output discarded.
func profMerge(spec string, workers int) {
	from, to, ok := strings.Cut(spec, ":")
	a, err1 := strconv.Atoi(from)
	b, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "-merge-steps: want A:B")
		os.Exit(2)
	}
	t0 := time.Now()
	m, err := merge.Prepare(flag.Args(), merge.Options{Load: load.Options{Parse: parse.Options{Workers: workers}, Warnings: os.Stderr},
		Steps: &slice.StepOptions{From: a, To: b}, FullPass: *fullPass})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	t1 := time.Now()
	res, err := m.Write(io.Discard)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "merge: first pass %v, second %v: %d events written\n", t1.Sub(t0).Round(time.Millisecond),
		time.Since(t1).Round(time.Millisecond), res.Events)
	for _, r := range res.Ranks {
		rr := r.Reread
		how := "whole (no chunk index)"
		if rr.Indexed {
			how = fmt.Sprintf("%d of %d parts of its chunk index", rr.ChunksRead, rr.Chunks)
		}
		fmt.Fprintf(os.Stderr, "  %s: second pass read %s: %d of %d events, %d MB of JSON\n", r.Label, how, rr.Events, r.Copy.Read, rr.Bytes>>20)
	}
}
