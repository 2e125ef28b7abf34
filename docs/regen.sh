#!/bin/sh
# Regenerates the example reports under docs/ from the bundled traces.
# Run from the repository root: sh docs/regen.sh
set -e
go build -o /tmp/traceq-docs ./cmd/traceq
rm -rf docs/example docs/example-ranks docs/example-steps
/tmp/traceq-docs report --out docs/example testdata/traces/torch/vllm_b200_eager_prefill.json.gz
/tmp/traceq-docs report --out docs/example-ranks testdata/traces/torch/dlrm8/
/tmp/traceq-docs report --out docs/example-steps testdata/traces/torch/hta_ns_resolution.json.gz
