package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/traceq/traceq/internal/golden"
)

// TestGoldenTables pins breakdown and kernels output, in every format, on
// real traces of both input formats. Refresh with -update after a
// deliberate change and review the diff.
func TestGoldenTables(t *testing.T) {
	inputs := map[string]string{
		"vllm_b200":  "../../testdata/traces/torch/vllm_b200_eager_prefill.json.gz",
		"nsys_after": "../../testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite",
		"dlrm8":      "../../testdata/traces/torch/dlrm8",
	}
	for name, path := range inputs {
		for _, cmd := range []string{"breakdown", "breakdown-all", "kernels"} {
			for _, format := range []string{"text", "markdown", "csv", "json"} {
				if cmd == "breakdown-all" && (format == "csv" || format == "json") {
					continue // --detail changes text and markdown only
				}
				args := []string{"traceq", cmd, "--format", format, "--top", "5"}
				if cmd == "breakdown-all" {
					args = []string{"traceq", "breakdown", "--detail", "all", "--format", format, "--top", "5"}
				}
				if cmd == "kernels" && name == "dlrm8" {
					args = append(args, "--per-device")
				}
				args = append(args, path)
				t.Run(name+"/"+cmd+"/"+format, func(t *testing.T) {
					var out1, out2, errb bytes.Buffer
					if code := run(args, nil, &out1, &errb); code != 0 {
						t.Fatalf("exit %d: %s", code, errb.String())
					}
					if code := run(args, nil, &out2, &errb); code != 0 || !bytes.Equal(out1.Bytes(), out2.Bytes()) {
						t.Fatalf("second run differs (exit %d)", code)
					}
					golden.Check(t, filepath.Join("testdata", "tables_"+name+"_"+cmd+"."+format+".golden"), out1.Bytes())
				})
			}
		}
	}
}
