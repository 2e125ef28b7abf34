package parquet

// The row types below are the dataset's schema: a column's name is its
// parquet tag. Names are a contract (docs/fleet.md): columns are only
// ever added, at the end of a table.
//
// Encodings: repeated strings are dictionary-encoded; time and id columns
// that grow along the file use delta encoding; every column is
// ZSTD-compressed (the writer's default codec).

// Activity is one row of activities/: one GPU activity.
type Activity struct {
	Input       string  `parquet:"input,dict"`
	PID         int64   `parquet:"pid"`
	Device      int32   `parquet:"device"`
	Stream      int32   `parquet:"stream"`
	Kind        string  `parquet:"kind,dict"`
	Name        string  `parquet:"name,dict"`
	Category    string  `parquet:"category,dict"`
	Top         string  `parquet:"top,dict"`
	StartNS     int64   `parquet:"start_ns,delta"`
	DurNS       int64   `parquet:"dur_ns"`
	Correlation int64   `parquet:"correlation,delta"`
	Step        *int32  `parquet:"step,optional"`
	StepKind    string  `parquet:"step_kind,dict"`
	StepMarker  *string `parquet:"step_marker,optional,dict"`
}

// Step is one row of steps/: one step on one device of one process, as
// the steps command lists it (steps without GPU work have no row).
type Step struct {
	Device   int32  `parquet:"device"`
	Step     int32  `parquet:"step"`
	Kind     string `parquet:"kind,dict"`
	Marker   string `parquet:"marker,dict"`
	StartNS  int64  `parquet:"start_ns"`
	EndNS    int64  `parquet:"end_ns"`
	SpanNS   int64  `parquet:"span_ns"`
	BusyNS   int64  `parquet:"busy_ns"`
	KernelNS int64  `parquet:"kernel_ns"`
	Tokens   *int64 `parquet:"tokens,optional"`
	// Added to the list: which input and process, and the CPU
	// marker range itself.
	Input         string `parquet:"input,dict"`
	PID           int64  `parquet:"pid"`
	MarkerStartNS int64  `parquet:"marker_start_ns"`
	MarkerEndNS   int64  `parquet:"marker_end_ns"`
}

// Launch is one row of launches/: one CPU-side launch call.
type Launch struct {
	PID         int64  `parquet:"pid"`
	Thread      int64  `parquet:"thread"`
	API         string `parquet:"api,dict"`
	StartNS     int64  `parquet:"start_ns"`
	DurNS       int64  `parquet:"dur_ns"`
	Correlation int64  `parquet:"correlation,delta"`
	Input       string `parquet:"input,dict"`
}

// Input is one row of inputs/: one input file's share of one rank
// partition (an nsys export with two ranked processes has a row in each).
type Input struct {
	Path          string  `parquet:"path"`
	Format        string  `parquet:"format"`
	WorldSize     *int32  `parquet:"world_size,optional"`
	Devices       []int32 `parquet:"devices,list"`
	TraceqVersion string  `parquet:"traceq_version"`
	Anomalies     int64   `parquet:"anomalies"`
	// Added: the activities of the partition, and why the input ended
	// early (null when complete).
	Activities int64   `parquet:"activities"`
	Truncated  *string `parquet:"truncated,optional"`
	// Added: the machine the input was captured on (null when unknown).
	Host *string `parquet:"host,optional,dict"`
}

// tables are the dataset's directories, in the order they are written.
var tables = []string{"activities", "steps", "launches", "inputs"}
