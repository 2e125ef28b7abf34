// Package parquet writes traceq's model as a hive-partitioned Parquet
// dataset (traceq export --format parquet) that DuckDB, Spark, Trino or
// Dask scan in parallel: one row per GPU activity, per step and device,
// per launch call, and per input and rank, under
//
//	activities/run=RUN/rank=R/part-N.parquet
//	steps/run=RUN/rank=R/part-N.parquet
//	launches/run=RUN/rank=R/part-N.parquet
//	inputs/run=RUN/rank=R/part-N.parquet
//
// The column names and types (schema.go) are a contract, documented in
// docs/fleet.md and only ever added to. Partition columns (run, rank) are
// in the directory names only. Times are int64 nanoseconds on the trace's
// clock, never floats.
//
// The rows are what breakdown and steps sum: the per-(rank, device, step
// kind, category) sums of activities.dur_ns are breakdown's kernel_ns,
// and steps.busy_ns and kernel_ns are the steps command's. The package
// computes no figure beyond the per-step ones; it lays the model out.
//
// Files are written through a function the caller gives (the command
// stages them with outfile.Tree, which puts a run's partitions in place
// together); the writer streams: rows go out
// in row groups as they are produced, and only one row group per open
// file is held.
package parquet
