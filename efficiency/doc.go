// Package efficiency measures GPU work against what the device could do:
// the speed of light. It prices each kernel's CPU op with opcost, compares
// the price with the device's roofs from gpuspec and with the measured
// kernel time, and sums the figures per op shape, category and step kind
// (docs/efficiency.md, docs/definitions.md#efficiency).
package efficiency
