// Command names writes the many-names trace of issue 19 (item 15) with
// internal/gen (gen.WriteNames): N kernels of N distinct long names (2 KB
// by default), each launched once, in steps; 100k names make about 240 MB
// of JSON, 2.6 MB as .json.gz. bench/run.sh runs breakdown and export on
// it against the per-file memory budget.
//
//	go run ./bench/names -n 100000 -o /tmp/names.json.gz
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/traceq/traceq/internal/gen"
)

func main() {
	var (
		out    = flag.String("o", "names.json.gz", "output `FILE` (.gz: gzip)")
		n      = flag.Int("n", 100_000, "distinct kernel names")
		size   = flag.Int("size", 2048, "bytes per name")
		groups = flag.Int("groups", 10, "short names the names share")
		steps  = flag.Int("steps", 250, "kernels per step")
	)
	flag.Parse()
	if err := write(*out, gen.NamesConfig{Names: *n, Size: *size, Groups: *groups, PerStep: *steps}); err != nil {
		fmt.Fprintln(os.Stderr, "names:", err)
		os.Exit(1)
	}
}

func write(path string, cfg gen.NamesConfig) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(f)
		w = zw
	}
	if err := gen.WriteNames(w, cfg); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	return f.Close()
}
