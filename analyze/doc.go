// Package analyze turns parsed traces into the numbers traceq reports:
// per-device and per-category GPU time (Breakdown), per-kernel-name
// statistics (Kernels), and their step-by-step variants.
//
// It computes plain data and prints nothing; package render formats it.
// Every figure is integer nanoseconds until a ratio is taken.
//
// Definitions (the README repeats them):
//   - kernel time: the sum of the durations of GPU activities (kernels,
//     memcpys, memsets). Overlapping activities (several streams) each count
//     in full, so kernel time can exceed wall time.
//   - busy time: the length of the union of the activities' [start, end)
//     intervals: wall time during which at least one activity ran.
//   - span: from the first activity's start to the last activity's end.
//   - a category's busy time is the union of that category's intervals only.
//   - share: a category's kernel time over the group's kernel time.
package analyze
