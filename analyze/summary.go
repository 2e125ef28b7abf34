package analyze

import (
	"slices"

	"github.com/traceq/traceq/classify"
)

// KindSummary is the answer to "where does the step time of this kind go"
// for one run: every device of every rank of the run, summed. It is what
// the first screen of breakdown shows (see docs/definitions.md#run-summary).
type KindSummary struct {
	Run      string
	StepKind StepKind
	// Ranks counts the processes with work of the kind, Devices the
	// (process, device) groups; Steps is the most steps any device has
	// (0 without steps) and Windows the windows summed (steps × devices,
	// or devices for a whole trace).
	Ranks, Devices, Steps, Windows   int
	KernelNS, BusyNS, SpanNS, IdleNS int64
	// SpanNS of the windows one by one, for a stepped kind: the step time.
	StepSpan Summary
	// Periods is the number of windows with a next step; PeriodP50 and
	// GapP50 their period and gap medians.
	Periods           int
	PeriodP50, GapP50 float64
	// TokenSteps counts the windows whose step marker gives a token count;
	// TokensP50 is their median count and NSPerToken their summed span
	// over their summed tokens.
	TokenSteps int
	TokensP50  float64
	NSPerToken float64
	Idle       IdleSplit
	// Categories: every category of the kind, most kernel time first, with
	// shares of the summed kernel time and of the summed span.
	Categories []CategoryStat
	// PerRank is each rank's kernel time per window, in rank order: the
	// spread across ranks. MaxRank is the group of the rank with the
	// most (the first on a tie).
	PerRank []int64
	MaxRank *Group
	// RankSpread summarises PerRank: min, median (P50), max.
	RankSpread Summary
}

// KernelPerStepNS is the kernel time per window.
func (s *KindSummary) KernelPerStepNS() int64 { return PerStep(s.KernelNS, s.Windows) }

// Summarize sums a group table by run and step kind, in the groups'
// order: runs in input order, kinds in report order. Unattributed time is
// a kind like the others; callers decide how to show it.
func Summarize(g *GroupTable, st *StepTable) []KindSummary {
	type key struct {
		run  string
		kind StepKind
	}
	type rankKey struct {
		input int
		proc  int32
	}
	var order []key
	acc := map[key]*KindSummary{}
	cats := map[key]map[classify.Category]*CategoryStat{}
	ranks := map[key]map[rankKey]int{} // rank -> index in PerRank
	rankWin := map[key][]int64{}       // windows per rank, by index
	rankFirst := map[key][]*Group{}    // each rank's first group, by index
	for i := range g.Groups {
		gr := &g.Groups[i]
		k := key{gr.Run, gr.StepKind}
		s := acc[k]
		if s == nil {
			s = &KindSummary{Run: gr.Run, StepKind: gr.StepKind}
			acc[k] = s
			order = append(order, k)
			cats[k] = map[classify.Category]*CategoryStat{}
			ranks[k] = map[rankKey]int{}
		}
		s.Devices++
		s.Steps = max(s.Steps, gr.Steps)
		w := max(gr.Steps, 1)
		s.Windows += w
		s.KernelNS += gr.KernelNS
		s.BusyNS += gr.BusyNS
		s.SpanNS += gr.SpanNS
		s.IdleNS += gr.IdleNS
		s.Idle.LaunchBoundNS += gr.Idle.LaunchBoundNS
		s.Idle.DeviceSideNS += gr.Idle.DeviceSideNS
		s.Idle.UnknownNS += gr.Idle.UnknownNS
		for _, c := range gr.Categories {
			cs := cats[k][c.Category]
			if cs == nil {
				cs = &CategoryStat{Category: c.Category}
				cats[k][c.Category] = cs
			}
			cs.KernelNS += c.KernelNS
			cs.BusyNS += c.BusyNS
			cs.Instances += c.Instances
		}
		rk := rankKey{gr.Input, gr.Proc}
		ri, ok := ranks[k][rk]
		if !ok {
			ri = len(s.PerRank)
			ranks[k][rk] = ri
			s.PerRank = append(s.PerRank, 0)
			rankWin[k] = append(rankWin[k], 0)
			rankFirst[k] = append(rankFirst[k], gr)
		}
		s.PerRank[ri] += gr.KernelNS
		rankWin[k][ri] += int64(w)
	}
	out := make([]KindSummary, 0, len(order))
	for _, k := range order {
		s := acc[k]
		s.Ranks = len(s.PerRank)
		// Groups come by input and process, so ranks are in rank order;
		// a tie goes to the first.
		best := 0
		for i := range s.PerRank {
			s.PerRank[i] = PerStep(s.PerRank[i], int(rankWin[k][i]))
			if s.PerRank[i] > s.PerRank[best] {
				best = i
			}
		}
		s.MaxRank = rankFirst[k][best]
		s.RankSpread = summarize(slices.Clone(s.PerRank))
		s.Categories = categoryList(cats[k], s.KernelNS, s.SpanNS, s.Windows)
		if st != nil && k.kind != KindAll && k.kind != KindNone {
			var spans, periods, gaps, tokens []int64
			var tokSpan, tokSum int64
			for i := range st.Rows {
				r := &st.Rows[i]
				if r.Run != k.run || r.Step.Kind != k.kind {
					continue
				}
				spans = append(spans, r.SpanNS)
				if r.Step.Tokens >= 0 {
					tokens = append(tokens, r.Step.Tokens)
					tokSpan += r.SpanNS
					tokSum += r.Step.Tokens
				}
				if r.HasNext {
					periods = append(periods, r.PeriodNS)
					gaps = append(gaps, r.GapNS)
				}
			}
			s.StepSpan = summarize(spans)
			s.Periods = len(periods)
			s.PeriodP50, s.GapP50 = summarize(periods).P50, summarize(gaps).P50
			s.TokenSteps, s.TokensP50, s.NSPerToken = len(tokens), summarize(tokens).P50, Ratio(tokSpan, tokSum)
		}
		out = append(out, *s)
	}
	return out
}
