package analyze

import "github.com/traceq/traceq/trace"

// ProcRank is the distributed rank breakdown reports for the activities of
// process proc of t: the process's own rank (an nsys export's process
// list), or the trace's (Kineto's distributedInfo) when it holds one
// process; nil when neither says. traceq export partitions by it, so that
// its sums line up with breakdown's groups.
func ProcRank(t *trace.Trace, proc int32) *int { return procRank(t, proc) }
