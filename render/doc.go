// Package render formats analysis results as text, markdown, CSV and JSON
// tables. It computes nothing: every number comes from package analyze.
//
// Durations print in milliseconds with three decimals (microsecond
// resolution), rounded half up from integer nanoseconds without going
// through a float; shares print as percentages with one decimal.
package render
