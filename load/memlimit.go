package load

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// runLimit and fileLimit are the soft limits set on the Go heap unless
// GOMEMLIMIT is set: runLimit while a command holds several inputs,
// fileLimit while it holds one (Load of one file, One, each input of
// export). What is live is the models being parsed (two files at once)
// and the table's records of every input (docs/performance.md); without
// a limit the collector lets the heap grow to twice what is live before
// collecting, so any input whose model passes half the limit takes the
// process to the limit. Near the limit it collects more often instead,
// which costs little here: the models' big slices hold no pointers, so
// there is almost nothing to mark. Live data above the limit is still
// allowed (it is soft).
//
// Each is its budget less what the process holds outside the heap (its
// code and runtime, ~20 MB): runLimit 380 MiB for issue 21's 450 MB of a
// run (8 ranks of 1 GB peaked at 401–403 MiB with it; at 400 MiB at 419–
// 476, the heap growing past the limit while a collection ran, and at 900
// MiB in more CPU; at 300 MiB the collector ran too often, +25 % CPU); fileLimit 200
// MiB for issue 21's 250 MB of one 1 GB file (its model leaves ~130 MB
// live: at 350 MiB breakdown peaked at 265–268 MiB, at 200 MiB at
// 221–224 MiB in the same CPU, three runs each alternated). Inputs that
// hold more than the budget live (100k distinct 2 KB names: 240 MB;
// a shaped 1 GB trace) follow the live heap (limitFor): the names
// export peaked at 376–388 MiB under 350 MiB and 341–348 MiB under 200,
// the shaped breakdown at 360–369 and 271–277 MiB, CPU within the runs'
// noise (2026-12-01, load average 4–6).
const (
	runLimit  = 380 << 20
	fileLimit = 200 << 20
)

func init() { limitMemory(2) }

// budget is the limit limitMemory set last; 0 when GOMEMLIMIT is set.
var budget atomic.Int64

// limitMemory sets the soft limit for a command holding the models of
// files inputs at once (see runLimit), unless GOMEMLIMIT is set.
func limitMemory(files int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	b := int64(runLimit)
	if files <= 1 {
		b = fileLimit
	}
	if budget.Swap(b) == 0 {
		watchHeap()
	}
	setLimits(b)
}

// setLimits sets the soft limit (limitFor) and, unless GOGC is set, GOGC
// (gcPercentFor) for what the last collection left live, against budget
// b.
func setLimits(b int64) {
	live := liveHeap()
	debug.SetMemoryLimit(limitFor(live, b))
	if !gogcSet {
		debug.SetGCPercent(gcPercentFor(live, b))
	}
}

// maxGCPercent is the collector's GOGC while what is live is small
// against the budget (gcPercentFor).
const maxGCPercent = 400

// gcPercentFor is the GOGC when a collection left live bytes: the heap
// may grow to five times what is live before the next collection (400)
// while that stays under four fifths of the budget, and to twice (100,
// Go's default) once what is live nears the budget, as before. A trace
// of tens of MB (most real ones) then takes a few collections instead of
// a dozen, each of which made the decoders pay write barriers while it
// ran: 8 real traces of 15–54 MB, 6 pairs alternated, 0.90× the CPU at
// the median, the peaks 4–16 MiB higher (2026-12-02). Near
// the budget, growing fivefold would leave the limit alone to pace the
// collector, which let the heap pass it while a collection ran (8 ranks
// at a 400 MiB limit: 418–476 MiB, see runLimit).
func gcPercentFor(live, budget int64) int {
	if live <= 0 {
		return maxGCPercent
	}
	p := (budget*4/5 - live) * 100 / live
	return int(max(100, min(maxGCPercent, p)))
}

// gogcSet leaves GOGC as the environment set it.
var gogcSet = os.Getenv("GOGC") != ""

// limitFor is the soft limit when a collection left live bytes: the
// budget, or a quarter above what is live once that passes it. A limit
// under what is live makes the collector run back to back, up to half
// the CPU, for nothing: the 5 M-kernel nsys export of bench/nsys (a
// model of ~600 MB) took 1,356 collections and 4.5 CPU-s more under a
// 350 MiB limit than under none. Past the budget, which is lost anyway,
// the collector runs once per quarter of growth, and the peak stays
// within a quarter of what is live (not twice, as with no limit).
func limitFor(live, budget int64) int64 {
	if live <= budget {
		return budget
	}
	return live + live/4
}

// watchHeap sets the limit after every collection (limitFor), from the
// finalizer of an object that each collection frees and that each
// finalizer makes anew.
func watchHeap() {
	s := new([64]byte) // not a tiny allocation: those may never be finalized
	runtime.SetFinalizer(s, func(*[64]byte) {
		if b := budget.Load(); b > 0 {
			setLimits(b)
		}
		watchHeap()
	})
}

// liveHeap is what the last collection left of the heap.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
