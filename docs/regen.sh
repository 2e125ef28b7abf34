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
rm -rf "$root/example" "$root/example-ranks" "$root/example-steps"
"$traceq" report --out "$root/example" testdata/traces/torch/vllm_b200_eager_prefill.json.gz
"$traceq" report --out "$root/example-ranks" testdata/traces/torch/dlrm8/
"$traceq" report --out "$root/example-steps" testdata/traces/torch/hta_ns_resolution.json.gz
