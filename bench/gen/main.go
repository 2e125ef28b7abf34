// Command gen writes the synthetic vLLM-like rank traces of the scale
// benchmark (bench/run.sh) with internal/gen: one file per rank, plain
// JSON or gzip, streamed so that a multi-GB trace needs little memory.
//
//	go run ./bench/gen -ranks 8 -steps 4400 -gz -out /tmp/traceq-bench
//
// With -straggler R the ranks are one run on one clock (gen.WriteRank):
// rank R computes -slowdown % slower and the others wait for it in every
// all-reduce, for traceq collectives; -slowdown 0 writes the same run
// with the straggler fixed. The motivating scenario of docs/findings.md,
// a TP-8 decode run with a slow rank 5 and its fixed twin:
//
//	go run ./bench/gen -ranks 8 -steps 40 -layers 4 -decode-every 0 -straggler 5 -out before
//	go run ./bench/gen -ranks 8 -steps 40 -layers 4 -decode-every 0 -straggler 5 -slowdown 0 -out after
//
// With -nodes N the ranks are a run over N hosts (gen.WriteNodeRank) in
// DIR/node{n}/rank{r}.json, host n's clock -skew × n ns late: for traceq
// merge and the communicators.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/traceq/traceq/internal/gen"
)

func main() {
	var (
		out      = flag.String("out", ".", "output `DIR`")
		ranks    = flag.Int("ranks", 1, "number of rank files")
		steps    = flag.Int("steps", 4400, "steps per rank")
		layers   = flag.Int("layers", 32, "transformer layers per step")
		decode   = flag.Int("decode-every", 50, "a prefill step every N steps, decode steps between")
		mixed    = flag.Int("mixed-every", 0, "a mixed step every N steps (0: none)")
		seed     = flag.Int64("seed", 1, "random seed")
		gz       = flag.Bool("gz", false, "write .json.gz (gzip level 6, like gzip(1)'s default) instead of .json")
		parallel = flag.Int("parallel", 2, "rank files written at once")
		strag    = flag.Int("straggler", -1, "write one run on one clock whose rank `R` is slower (gen.WriteRank)")
		slowdown = flag.Int("slowdown", 30, "with -straggler: the slow rank's extra compute time, %")
		nodes    = flag.Int("nodes", 0, "write a run over `N` hosts (gen.WriteNodeRank): -ranks in all, one tensor-parallel group per host, an expert-parallel all-to-all over every rank, in DIR/node{n}/rank{r}.json; with -straggler R slower by -slowdown %")
		skew     = flag.Int64("skew", 0, "with -nodes: host n's clock is n × `NS` late")
		a2aArgs  = flag.Bool("a2a-args", false, "with -nodes: the prefill all-to-alls are NCCL's with uneven split sizes in their args (gen.NodeConfig.AllToAllArgs)")
		jitter   = flag.Int64("jitter", 2000, "with -straggler: up to `NS` added to each compute kernel of each rank")
		bus      = flag.Int64("bus", 16, "with -straggler: the bus bandwidth of the all-reduces, `GBPS`")
		latency  = flag.Int64("latency", 0, "with -straggler: each all-reduce's fixed cost, `NS`")
		launch   = flag.Int64("launch", 0, "with -straggler: launch the decode steps eagerly, the host taking `NS` per launch (0: replay a CUDA graph)")
		shapes   = flag.Bool("shapes", false, "write the eager steps' CPU ops with their shapes, and each rank's decode-graph capture trace in DIR/capture_traces (gen.Config.Shapes, gen.WriteCapture)")
	)
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	cfg := gen.Config{Ranks: *ranks, Steps: *steps, DecodeEvery: *decode, MixedEvery: *mixed, Layers: *layers, Seed: *seed, Shapes: *shapes}
	var run *gen.RunConfig
	if *strag >= 0 {
		run = &gen.RunConfig{Ranks: *ranks, Steps: *steps, DecodeEvery: *decode, Layers: *layers, Straggler: *strag,
			SlowdownPct: *slowdown, JitterNS: *jitter, BusGBps: *bus, LatencyNS: *latency, LaunchNS: *launch, Seed: *seed}
	}
	var nodeRun *gen.NodeConfig
	if *nodes > 0 {
		if *ranks%*nodes != 0 {
			fmt.Fprintln(os.Stderr, "gen: -ranks must be a multiple of -nodes")
			os.Exit(2)
		}
		nodeRun = &gen.NodeConfig{Nodes: *nodes, PerNode: *ranks / *nodes, Steps: *steps, DecodeEvery: *decode, Layers: *layers,
			JitterNS: 2000, SkewNS: *skew, AllToAllArgs: *a2aArgs, Seed: *seed}
		if *strag >= 0 {
			nodeRun.SlowPct = make([]int, *ranks)
			nodeRun.SlowPct[*strag] = *slowdown
		}
		run = nil
	}
	sem := make(chan struct{}, max(1, *parallel))
	var wg sync.WaitGroup
	errs := make([]error, *ranks)
	for r := range *ranks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if nodeRun != nil {
				errs[r] = writeNode(*out, *nodeRun, r, *gz)
				return
			}
			errs[r] = write(*out, cfg, run, r, *gz)
			if errs[r] == nil && *shapes {
				errs[r] = writeCapture(*out, cfg, r)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

func write(dir string, cfg gen.Config, run *gen.RunConfig, rank int, gz bool) error {
	return writeFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", rank)), gz, func(w io.Writer) (string, error) {
		if run != nil {
			exp, err := gen.WriteRank(w, *run, rank)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d bytes\t%d GPU activities\t%d kernels", exp.Bytes, exp.Activities, exp.Activities), nil
		}
		exp, err := gen.Write(w, cfg, rank)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d bytes\t%d GPU activities\t%d kernels", exp.Bytes, exp.Activities, exp.Kernels), nil
	})
}

// writeNode writes rank of a run over hosts as DIR/node{n}/rank{r}.json.
func writeNode(dir string, cfg gen.NodeConfig, rank int, gz bool) error {
	path := filepath.Join(dir, cfg.Host(rank), fmt.Sprintf("rank%d.json", rank))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeFile(path, gz, func(w io.Writer) (string, error) {
		exp, err := gen.WriteNodeRank(w, cfg, rank)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d bytes\t%d GPU activities", exp.Bytes, exp.Activities), nil
	})
}

// writeFile creates path (path.gz, gzip level 6, with gz), writes it
// with fill and prints the line fill returns after the path.
func writeFile(path string, gz bool, fill func(io.Writer) (string, error)) error {
	if gz {
		path += ".gz"
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if gz {
		zw, _ = gzip.NewWriterLevel(bw, 6)
		w = zw
	}
	line, err := fill(w)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Printf("%s\t%s\n", path, line)
	return f.Close()
}

// writeCapture writes rank's decode-graph capture trace where vLLM puts
// them: DIR/capture_traces/graph_capture_rank_N.json.
func writeCapture(dir string, cfg gen.Config, rank int) error {
	d := filepath.Join(dir, "capture_traces")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	path := filepath.Join(d, fmt.Sprintf("graph_capture_rank_%d.json", rank))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := gen.WriteCapture(f, cfg, rank); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
