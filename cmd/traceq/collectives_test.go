package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/gen"
)

// writeRun writes the ranks of a generated run into a new directory.
func writeRun(t *testing.T, cfg gen.RunConfig) (string, *gen.RunExpected) {
	t.Helper()
	dir := t.TempDir()
	var exp *gen.RunExpected
	for r := range cfg.Ranks {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank%d.json", r)))
		if err != nil {
			t.Fatal(err)
		}
		e, err := gen.WriteRank(f, cfg, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		exp = e
	}
	return dir, exp
}

var genRun = gen.RunConfig{Ranks: 4, Steps: 7, DecodeEvery: 3, Layers: 2, Straggler: 2, SlowdownPct: 25, JitterNS: 500,
	BusGBps: 16, Seed: 13}

// TestGoldenCollectives pins collectives output in every format on real
// traces (a vLLM rank with args and symmetric-memory all-reduces, the
// two processes of an nsys export, an 8-rank NCCL run) and a generated
// run; each twice for byte-identical output.
func TestGoldenCollectives(t *testing.T) {
	dir, _ := writeRun(t, genRun)
	inputs := []struct {
		name string
		args []string
	}{
		{"vllm_b200", []string{"--bytes-per-token", "14336", "--link", "nvlink5", "../../testdata/traces/torch/vllm_b200_eager_prefill.json.gz"}},
		{"nsys_after", []string{"--link", "pcie5", "../../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite"}},
		{"dlrm8", []string{"../../testdata/traces/torch/dlrm8"}},
		{"gen4", []string{"--bytes-per-token", strconv.FormatInt(genRun.BytesPerToken(), 10), "--link", "pcie4", dir}},
	}
	for _, in := range inputs {
		for _, format := range []string{"text", "markdown", "csv", "json"} {
			t.Run(in.name+"/"+format, func(t *testing.T) {
				// The temporary directory differs from run to run: GEN.
				args := append([]string{"traceq", "collectives", "--format", format}, in.args...)
				checkGoldenTwice(t, args, dir, filepath.Join("testdata", "collectives_"+in.name+"."+format+".golden"))
			})
		}
	}
}

// TestCollectivesJSONContract reads the JSON contract back from
// the CLI on a generated run and checks each field against the
// generator's record.
func TestCollectivesJSONContract(t *testing.T) {
	dir, exp := writeRun(t, genRun)
	var out, errb bytes.Buffer
	args := []string{"traceq", "collectives", "--format", "json", "--bytes-per-token", strconv.FormatInt(genRun.BytesPerToken(), 10),
		"--link", "20", dir}
	if code := run(args, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Link *struct {
			GBps float64 `json:"gbs"`
		} `json:"link"`
		Collectives []struct {
			Op                 string `json:"op"`
			StepKind           string `json:"step_kind"`
			GroupSize          int    `json:"group_size"`
			Instances          int64  `json:"instances"`
			UnmatchedInstances int64  `json:"unmatched_instances"`
			KernelNS           int64  `json:"kernel_ns"`
			TransferNS         int64  `json:"transfer_ns"`
			WaitNS             int64  `json:"wait_ns"`
			Straggler          *struct {
				Rank         int   `json:"rank"`
				LastArrivals int64 `json:"last_arrivals"`
			} `json:"straggler"`
			Ranks []struct {
				Rank         int   `json:"rank"`
				KernelNS     int64 `json:"kernel_ns"`
				TransferNS   int64 `json:"transfer_ns"`
				WaitNS       int64 `json:"wait_ns"`
				LastArrivals int64 `json:"last_arrivals"`
			} `json:"ranks"`
			Sizes []struct {
				Bytes      *int64   `json:"bytes"`
				Instances  int64    `json:"instances"`
				TransferNS int64    `json:"transfer_ns"`
				AlgBW      *float64 `json:"algbw_gbs"`
				BusBW      *float64 `json:"busbw_gbs"`
				LinkShare  *float64 `json:"link_share"`
				Source     string   `json:"source"`
			} `json:"sizes"`
		} `json:"collectives"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Link == nil || doc.Link.GBps != 20 || len(doc.Collectives) != len(exp.Ops) {
		t.Fatalf("doc: %s", out.String())
	}
	rel := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	for i, want := range exp.Ops {
		c := doc.Collectives[i]
		var kernel, wait int64
		for r := range genRun.Ranks {
			kernel += want.KernelNS[r]
			wait += want.WaitNS[r]
			g := c.Ranks[r]
			if g.Rank != r || g.KernelNS != want.KernelNS[r] || g.WaitNS != want.WaitNS[r] || g.TransferNS != want.TransferNS ||
				g.LastArrivals != want.LastArrivals[r] {
				t.Errorf("%s rank %d: %+v", want.Kind, r, g)
			}
		}
		s := want.Straggler()
		if c.Op != "allreduce" || c.StepKind != want.Kind || c.GroupSize != genRun.Ranks || c.Instances != want.Instances ||
			c.UnmatchedInstances != 0 || c.KernelNS != kernel || c.TransferNS != want.TransferNS || c.WaitNS != wait ||
			c.Straggler == nil || c.Straggler.Rank != s || c.Straggler.LastArrivals != want.LastArrivals[s] {
			t.Errorf("%s: %+v", want.Kind, c)
		}
		if len(c.Sizes) != len(want.Sizes) {
			t.Fatalf("%s: %d sizes, want %d", want.Kind, len(c.Sizes), len(want.Sizes))
		}
		for _, sz := range c.Sizes {
			w := want.Sizes[gen.SizeKey{Bytes: *sz.Bytes, Source: sz.Source}]
			if w == nil || sz.Instances != w.Instances || sz.TransferNS != w.TransferNS || sz.BusBW == nil ||
				!rel(*sz.BusBW, float64(genRun.BusGBps)) || !rel(*sz.LinkShare, float64(genRun.BusGBps)/20) ||
				!rel(*sz.AlgBW, float64(*sz.Bytes)*float64(w.Instances)/float64(w.TransferNS)) {
				t.Errorf("%s size %+v, want %+v", want.Kind, sz, w)
			}
		}
	}
}

func TestCollectivesUsage(t *testing.T) {
	in := "../../testdata/traces/torch/dlrm8"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--link", "pcie9", in}, "unknown link"},
		{[]string{"--link", "-4", in}, "unknown link"},
		{[]string{"--bytes-per-token", "-1", in}, "--bytes-per-token"},
		{[]string{"--kind", "sideways", in}, "unknown --kind"},
		{[]string{"--format", "xml", in}, "unknown format"},
		{nil, "no input files"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"traceq", "collectives"}, tc.args...), nil, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), exitUsage, tc.want)
		}
	}
}

// TestCollectivesNone: inputs without collective kernels (or none of the
// kind asked for) say so; a --kind the inputs do not hold at all is an
// error, as in every command (issue 19, item 21).
func TestCollectivesNone(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		want, errs string
	}{
		{[]string{"../../testdata/traces/torch/hta_ns_resolution.json.gz"}, 0, "no collective kernels (category communication/*) in the inputs\n", ""},
		{[]string{"--kind", "unattributed", "../../testdata/traces/torch/dlrm8"}, 0,
			"no collective kernels (category communication/*) in unattributed steps of the inputs\n", ""},
		{[]string{"--kind", "decode", "../../testdata/traces/torch/dlrm8"}, 1, "", "traceq: no decode steps; found step ×8\n"},
		{[]string{"--kind", "prefill", "../../testdata/traces/torch/sglang_decode.json.gz"}, 1, "", "traceq: no prefill steps; found decode ×"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"traceq", "collectives"}, tc.args...), nil, &out, &errb)
		if code != tc.code || out.String() != tc.want || !strings.HasPrefix(errb.String(), tc.errs) || (tc.errs == "") != (errb.Len() == 0) {
			t.Errorf("%v: exit %d, %q, stderr %q; want %d, %q, %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want, tc.errs)
		}
	}
}

// TestCollectivesMatchedOnce: breakdown, advise and report match the
// collectives once, for the findings (the report's sections) and the speed
// of light's link time together (they matched twice), with the devices'
// default link or --link.
func TestCollectivesMatchedOnce(t *testing.T) {
	in := "../../testdata/traces/torch/dlrm8"
	for _, args := range [][]string{
		{"traceq", "breakdown", in},
		{"traceq", "breakdown", "--link", "nvlink4", in},
		{"traceq", "advise", in},
		{"traceq", "report", "--out", filepath.Join(t.TempDir(), "r"), in},
	} {
		before := matches.Load()
		var out, errb bytes.Buffer
		if code := run(args, nil, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args[1:], code, errb.String())
		}
		if n := matches.Load() - before; n != 1 {
			t.Errorf("%v: %d matches of the collectives, want 1", args[1:], n)
		}
		if args[1] == "breakdown" && !strings.Contains(out.String(), "at the speed of light") {
			t.Errorf("%v: no speed of light (the link time needs the match):\n%s", args[1:], out.String())
		}
	}
}
