package merge

import (
	"strconv"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// wait is one rank's wait in one collective instance: the part of its
// kernel before the last rank arrived (docs/definitions.md#collectives).
type wait struct {
	start, dur int64 // on the rank's own clock
	device     int32
	last       int // the plan of the rank that arrived last
	op         string
	transfer   int64
}

// matchCollectives matches the ranks' collective kernels (the table's
// records, byInput the plans in the table's input order) as traceq
// collectives does, keeping the instances in the window: with steps,
// those whose kernels are all of the chosen steps; with a time window,
// those within nearWindow of it on the clocks aligned by the base. Each
// gives the ranks that waited their waits and, with --align
// collectives, the kernels' ends the clocks are aligned by.
func matchCollectives(tbl *window.Table, byInput, plans []*plan, opt Options, res *Result) {
	index := map[*plan]int{}
	for i, p := range plans {
		index[p] = i
	}
	var lo, hi int64
	if opt.Steps == nil {
		lo, hi = trace.AddSat(trace.AddSat(res.Origin, opt.From), -nearWindow), trace.AddSat(trace.AddSat(res.Origin, opt.To), nearWindow)
	}
	var insts []matched
	collectives.Match(tbl, collectives.Options{NoSizes: true, OnInstance: func(in *collectives.Instance) {
		m := matched{ranks: make([]int, len(in.Ranks)), ends: make([]int64, len(in.Ranks))}
		for j, r := range in.Ranks {
			p := byInput[r.Input]
			k := &tbl.Inputs[r.Input].Collectives.Kernels[in.Kernels[j]]
			if opt.Steps != nil && (k.Step < 0 || !p.chosen[k.Step]) {
				return
			}
			if opt.Steps == nil && (int64(k.Start)+p.ShiftNS < lo || int64(k.End())+p.ShiftNS > hi) {
				return
			}
			m.ranks[j] = index[p]
			m.ends[j] = int64(k.End()) + p.ShiftNS
		}
		for j, r := range in.Ranks {
			p := byInput[r.Input]
			recs := &tbl.Inputs[r.Input].Collectives
			k := &recs.Kernels[in.Kernels[j]]
			if w := k.Dur - in.TransferNS; w > 0 && j != in.Last {
				p.waits = append(p.waits, wait{start: int64(k.Start), dur: w, device: recs.Keys[k.Key].Device,
					last: index[byInput[in.Ranks[in.Last].Input]], op: in.Op, transfer: in.TransferNS})
			}
		}
		insts = append(insts, m)
	}})
	res.Instances = len(insts)
	all := make([]bool, len(plans))
	for i := range all {
		all[i] = true
	}
	// How far apart the ends are on the clocks as aligned so far.
	res.SpreadP50, res.SpreadMax = spread(insts, make([]int64, len(plans)), all)
	if res.Align != AlignCollectives {
		return
	}
	al := collectivesShift(len(plans), insts)
	for i, p := range plans {
		if al.joined[i] {
			p.ShiftNS += al.shift[i]
			p.AlignedBy, p.Joined = "collectives", true
		}
	}
	res.SpreadP50, res.SpreadMax = al.spreadP50, al.spreadMax
	origin(plans, res) // the clocks moved
}

// waitTid is the thread of device d's waits: after its streams, before
// its idle gaps.
func waitTid(d int64) int64 { return gpuTid(d, 1<<20-2) }

// annotateWaits writes the rank's waits as slices on a track per device,
// "waiting for rank R", and returns how many, those inside [lo, hi] of
// the rank's own clock.
func (p *plan) annotateWaits(m *metaWriter, labels []string, lo, hi int64) int64 {
	var n int64
	named := map[int64]bool{}
	for _, w := range p.waits {
		if w.start < lo || w.start+w.dur > hi {
			continue
		}
		d := int64(w.device)
		if !named[d] {
			named[d] = true
			m.thread(waitTid(d), "GPU "+strconv.FormatInt(d, 10)+" · waiting")
			p.threads++
		}
		m.slice(waitTid(d), "waiting for "+labels[w.last], w.start+p.ShiftNS, w.dur, "traceq",
			`"op": "`+w.op+`", "wait_ns": `+strconv.FormatInt(w.dur, 10)+`, "transfer_ns": `+strconv.FormatInt(w.transfer, 10))
		n++
	}
	return n
}
