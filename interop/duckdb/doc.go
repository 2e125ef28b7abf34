// Package duckdb holds the test that traceq export's Parquet datasets read
// back, through DuckDB, to the same numbers the CLI prints (issue 16). It
// is its own module so that traceq's binary never links DuckDB: run
//
//	cd interop/duckdb && go test ./...
//
// (.ci/run does). The test builds traceq, exports synthetic and real
// traces, and compares DuckDB's sums with breakdown, kernels and steps
// --format json to the nanosecond; it also runs the queries of
// docs/fleet.md and checks the outputs pasted there (-update rewrites
// them).
package duckdb
