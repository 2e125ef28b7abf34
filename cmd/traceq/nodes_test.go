package main

import (
	"bytes"
	"path/filepath"
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
