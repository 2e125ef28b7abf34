// Package analyze turns parsed traces into the numbers traceq reports:
// per-device and per-category GPU time (Breakdown), per-kernel-name
// statistics (Kernels), and their step-by-step variants.
//
// It computes plain data and prints nothing; package render formats it.
// Every figure is integer nanoseconds until a ratio is taken.
//
// What each figure means (kernel time, busy, span, idle, share, the step
// statistics, ...) is defined once, in docs/definitions.md; change it there
// when the code changes it.
package analyze
