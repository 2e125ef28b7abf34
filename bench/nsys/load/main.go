// Command load reads an nsys SQLite export with nsyssqlite.Open and prints
// a one-line summary. bench/nsys/run.sh times it when the traceq CLI is
// not built yet.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/traceq/traceq/parse/nsyssqlite"
)

func main() {
	names := flag.String("names", "demangled", "kernel names: demangled or short")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	for _, path := range flag.Args() {
		t, err := nsyssqlite.Open(path, nsyssqlite.Options{Names: *names})
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		var dur int64
		for i := range t.Activities {
			dur += t.Activities[i].Dur
		}
		fmt.Printf("%s: %d activities (%d ns), %d launches, %d ranges, %d names, %d procs, %d devices, nsys %s\n",
			path, len(t.Activities), dur, len(t.Launches), len(t.Ranges), len(t.Names), len(t.Procs), len(t.Meta.Devices), t.Meta.ToolVersion)
		for _, a := range t.Anomalies {
			fmt.Printf("  anomaly: %s: %d (e.g. %s)\n", a.What, a.Count, a.Example)
		}
	}
}
