// Command prof parses trace files and runs the breakdown as traceq
// breakdown does, with CPU and heap profiles and phase timings: the tool
// the scale work was measured with.
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
	"github.com/traceq/traceq/parse"
)

func main() {
	cpu := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	mem := flag.String("memprofile", "", "write a heap profile (after parsing) to `FILE`")
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
	var inputs []analyze.Input
	for _, p := range flag.Args() {
		t1 := time.Now()
		t, err := parse.File(p, parse.Options{Workers: *workers})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s: parsed in %v: %d activities, %d launches, %d ranges, %d names\n",
			p, time.Since(t1).Round(time.Millisecond), len(t.Activities), len(t.Launches), len(t.Ranges), len(t.Names))
		t2 := time.Now()
		steps, err := analyze.FindSteps(t, analyze.StepOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s: steps in %v\n", p, time.Since(t2).Round(time.Millisecond))
		inputs = append(inputs, analyze.Input{Path: p, Trace: t, Steps: steps})
	}
	if *mem != "" {
		f, err := os.Create(*mem)
		if err == nil {
			runtime.GC()
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	t3 := time.Now()
	analyze.Breakdown(inputs, analyze.Options{})
	analyze.Kernels(inputs, analyze.KernelOptions{MemOps: true})
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
