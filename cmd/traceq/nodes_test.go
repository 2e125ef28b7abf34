package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/gen"
)

// TestCollectivesOverHosts: a generated run over two hosts (two TP-8
// groups, an all-to-all over all 16 ranks), laid out in node
// directories. The answer names each communicator's link by its scope
// (--link intra=…,inter=…), the tables name host and rank, every
// communicator says what formed it; a malformed --link is a usage error.
func TestCollectivesOverHosts(t *testing.T) {
	slow := make([]int, 16)
	slow[5], slow[11] = 30, 15
	cfg := gen.NodeConfig{Steps: 4, DecodeEvery: 2, SlowPct: slow, Seed: 7}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := gen.WriteNodeRun(dir, cfg); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"traceq", "collectives", "--kind", "decode", "--bytes-per-token", "8192", "--link", "intra=nvlink4,inter=ib-ndr400", dir},
		nil, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{
		"decode: AllToAll dispatch (group 0) ", "busbw GB/s  of nvlink4  source", "= 32.0% of ib-ndr400 (across hosts)",
		"AllReduce (group 1)", "AllReduce (group 3)", "node0 · rank 5",
		"== decode · AllReduce (group 3) [8, 9, 10, 11, 12, 13, 14, 15] · 8 ranks",
		"communicator: group 3, ranks [8, 9, 10, 11, 12, 13, 14, 15] — by pg_config for kernels without process-group args (the smallest group of consecutive ranks the rank is in)",
		"  node1 · rank 11 (straggler)", "the link: ib-ndr400, 50.0 GB/s per direction (across hosts)", "tokens: in ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, bad := range []string{"intra=nvlink4,intra=pcie5", "inside=nvlink4", "inter=ib-ndr401"} {
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"traceq", "collectives", "--link", bad, dir}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--link") {
			t.Errorf("--link %s: exit %d, %q", bad, code, stderr.String())
		}
	}
}

// TestCollectivesSplitSizes: a run over two hosts whose prefill
// all-to-alls are NCCL's with uneven split sizes (gen's AllToAllArgs).
// The text and the JSON give the token imbalance by the split sizes, the
// generator's figure, and the busiest rank's rows.
func TestCollectivesSplitSizes(t *testing.T) {
	cfg := gen.NodeConfig{Steps: 4, DecodeEvery: 2, AllToAllArgs: true, Seed: 7}
	dir := filepath.Join(t.TempDir(), "run")
	exp, err := gen.WriteNodeRun(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want *gen.CommExpect
	for i := range exp.Comms {
		if c := &exp.Comms[i]; c.Kind == "prefill" && c.Op == "all_to_all" {
			want = c
		}
	}
	if want == nil || want.SplitInstances != want.Instances || want.SplitInstances == 0 {
		t.Fatalf("generated all-to-all %+v", want)
	}
	imb := float64(len(want.Ranks)) * float64(want.SplitMaxSum) / float64(want.SplitSum)
	busiest := 0
	for i, c := range want.SplitCount {
		if c > want.SplitCount[busiest] {
			busiest = i
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"traceq", "collectives", "--kind", "prefill", dir}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// Uneven splits are no size conflict.
	if strings.Contains(stderr.String()+stdout.String(), "disagree") {
		t.Errorf("a size conflict reported:\n%s%s", stderr.String(), stdout.String())
	}
	out := stdout.String()
	for _, s := range []string{
		"; token imbalance " + strconv.FormatFloat(imb, 'f', 2, 64) + "× by the split sizes (the busiest rank's rows sent or received over the mean)",
		fmt.Sprintf("split sizes: in %d of %d instances every rank's kernel gives the rows it sends and receives", want.Instances, want.Instances),
		fmt.Sprintf("the most over them: node%d · rank %d, %d rows", want.Ranks[busiest]/8, want.Ranks[busiest], want.SplitCount[busiest]),
	} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in\n%s", s, out)
		}
	}
	stdout.Reset()
	if code := run([]string{"traceq", "collectives", "--kind", "prefill", "--format", "json", dir}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var doc struct {
		Collectives []struct {
			Op             string   `json:"op"`
			TokenInstances int64    `json:"token_instances"`
			SplitInstances int64    `json:"split_instances"`
			SplitImbalance *float64 `json:"split_imbalance"`
			Ranks          []struct {
				SplitCount *int64 `json:"split_count"`
			} `json:"ranks"`
		} `json:"collectives"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range doc.Collectives {
		if c.Op != "all_to_all" {
			if c.SplitInstances != 0 || c.SplitImbalance != nil {
				t.Errorf("%s: split figures %d %v", c.Op, c.SplitInstances, c.SplitImbalance)
			}
			continue
		}
		found = true
		if c.SplitInstances != want.Instances || c.TokenInstances != 0 || c.SplitImbalance == nil || math.Abs(*c.SplitImbalance-imb) > 1e-9*imb ||
			len(c.Ranks) != len(want.SplitCount) {
			t.Fatalf("all_to_all: %+v, want %d instances, imbalance %v", c, want.Instances, imb)
		}
		for i, r := range c.Ranks {
			if r.SplitCount == nil || *r.SplitCount != want.SplitCount[i] {
				t.Errorf("rank %d: split count %v, want %d", i, r.SplitCount, want.SplitCount[i])
			}
		}
	}
	if !found {
		t.Error("no all_to_all in the JSON")
	}
}
