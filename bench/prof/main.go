// Command prof reads trace files through the loader every command uses
// (package load: parallel parsing, runs, steps, the model checks) and runs
// the breakdown as traceq breakdown does, with CPU and heap profiles and
// phase timings: the tool the scale work was measured with.
//
//	go run ./bench/prof -cpuprofile cpu.prof FILE...
//	go tool pprof -top cpu.prof
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/load"
	"github.com/traceq/traceq/parse"
)

func main() {
	cpu := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	mem := flag.String("memprofile", "", "write a heap profile (after loading) to `FILE`")
	after := flag.String("afterprofile", "", "write a heap profile after the breakdown to `FILE` (its alloc_space shows what the analysis allocated)")
	workers := flag.Int("workers", 0, "decoding goroutines per file (0: GOMAXPROCS)")
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
	tbl, err := load.Load(flag.Args(), load.Options{Parse: parse.Options{Workers: *workers}, Steps: true, Warnings: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
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
