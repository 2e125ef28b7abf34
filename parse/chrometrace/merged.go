package chrometrace

import (
	"github.com/tidwall/gjson"

	"github.com/traceq/traceq/trace"
)

// mergedRanks names the processes of a trace traceq merge wrote: its
// top-level "traceq" value lists, per process, the rank it holds
// ({"ranks": [{"pid": 1, "rank": 0, …}, …]}), which no process of a
// merged trace states itself (each rank's distributedInfo is not copied).
func mergedRanks(t *trace.Trace, raw []byte) {
	if raw == nil || t.Meta.Rank >= 0 {
		return
	}
	v := gjson.ParseBytes(raw)
	named := false
	for _, r := range v.Get("ranks").Array() {
		pid, ok := metaNum(r.Get("pid"))
		n, ok2 := metaNum(r.Get("rank"))
		if !ok || !ok2 || n < 0 || n > 1<<30 {
			continue
		}
		for i := range t.Procs {
			if t.Procs[i].PID == pid {
				t.Procs[i].Rank = int(n)
				named = true
			}
		}
	}
	if named {
		t.Meta.RankSource = trace.RankFromMerge
	}
}
