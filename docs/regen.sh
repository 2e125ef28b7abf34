#!/bin/sh
# Regenerates the example reports under docs/ from the bundled traces.
# Run from the repository root: sh docs/regen.sh
# TestExampleReports (docs_test.go) runs it into a temporary ROOT, with
# TRACEQ naming the binary it built, and compares every file with docs/.
set -e
root=${1:-docs}
traceq=${TRACEQ:-}
if [ -z "$traceq" ]; then
  go build -o /tmp/traceq-docs ./cmd/traceq
  traceq=/tmp/traceq-docs
fi
rm -rf "$root/example" "$root/example-ranks" "$root/example-steps" "$root/example-bench"
"$traceq" report --out "$root/example" testdata/traces/torch/vllm_b200_eager_prefill.json.gz
"$traceq" report --out "$root/example-ranks" testdata/traces/torch/dlrm8/
"$traceq" report --out "$root/example-steps" testdata/traces/torch/hta_ns_resolution.json.gz
# A benchmark log with the section report --append adds for two runs; the
# whole report and the charts sit next to it (--out).
mkdir -p "$root/example-bench"
printf '# Benchmark log\n\nThe 2-GPU torchrun NCCL job, profiled with nsys before and after a change.\n' >"$root/example-bench/BENCH.md"
TRACEQ_DATE=2026-11-30 "$traceq" report --append "$root/example-bench/BENCH.md" --out "$root/example-bench" \
  testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-before.sqlite.gz testdata/traces/nsys/nsys2026.2.1_torchrun-2gpu-nccl-after.sqlite
