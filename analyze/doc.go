// Package analyze turns a window table (package window) into the figures
// traceq reports about where GPU time goes. Its jobs:
//
//   - Breakdown: the groups (one per rank, device and step class: kernel,
//     busy, span and idle time, categories, top kernels, idle by cause,
//     launch statistics, exposed communication, time between steps), the
//     step table with each step's period and the per-group step statistics
//     and outliers, and the cross-rank comparison of each run;
//   - Summarize: the run summary breakdown's first screen shows;
//   - Kernels: the per-kernel-name table (nsys cuda_gpu_kern_sum's
//     columns), the one analysis that reads every duration of the models;
//   - Compare: the diff of two runs, each change judged against
//     --min-change and the step-to-step spread.
//
// Collectives are package collectives; the step attribution is package
// step. It computes plain data and prints nothing; package render formats
// it. Every figure is integer nanoseconds until a ratio is taken, and is
// defined once, in docs/definitions.md; change it there when the code
// changes it.
package analyze
