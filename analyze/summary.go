package analyze

import (
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/window"
)

// KindSummary is the answer to "where does the step time of this class
// go" for one run: every device of every rank of the run, summed. It is
// what the first screen of breakdown shows (see
// docs/definitions.md#run-summary).
type KindSummary struct {
	Run   string
	Class step.Class
	// Ranks counts the processes with work of the class, Devices the
	// (process, device) groups; Steps is the most steps any device has
	// (0 without steps) and Windows the windows summed (steps × devices,
	// or devices for a whole trace).
	Ranks, Devices, Steps, Windows   int
	KernelNS, BusyNS, SpanNS, IdleNS int64
	// StepSpan describes the windows' spans one by one, for steps: the
	// step time.
	StepSpan stats.Dist
	// Periods is the number of windows with a next step; PeriodP50 and
	// GapP50 their period and gap medians.
	Periods           int
	PeriodP50, GapP50 float64
	// TokenSteps counts the windows whose step marker gives a token count;
	// TokensP50 is their median count and NSPerToken their summed span
	// over their summed tokens: nil when those are 0 (undefined).
	TokenSteps int
	TokensP50  float64
	NSPerToken *float64
	Idle       window.IdleSplit
	// Categories: every category of the class, most kernel time first,
	// with shares of the summed kernel time and of the summed span.
	Categories []CategoryStat
	// PerRank is each rank's kernel time per window, in rank order: the
	// spread across ranks. MaxRank is the rank with the most (the first
	// on a tie).
	PerRank []int64
	MaxRank *window.Rank
	// RankSpread describes PerRank: min, median (P50), max.
	RankSpread stats.Dist
}

// KernelPerStepNS is the kernel time per window.
func (s *KindSummary) KernelPerStepNS() int64 { return stats.PerStep(s.KernelNS, s.Windows) }

// Summarize sums a breakdown by run and class, in the groups' order: runs
// in input order, classes in report order. Unattributed time is a class
// like the others; callers decide how to show it.
func Summarize(g *GroupTable) []KindSummary {
	type key struct {
		run   string
		class step.Class
	}
	var order []key
	acc := map[key]*KindSummary{}
	cats := map[key]map[classify.Category]*CategoryStat{}
	ranks := map[key]map[window.RankID]int{} // rank -> index in PerRank
	rankWin := map[key][]int64{}             // windows per rank, by index
	rankOf := map[key][]*window.Rank{}       // each rank, by index
	for i := range g.Groups {
		gr := &g.Groups[i]
		k := key{gr.Rank.Run, gr.Class}
		s := acc[k]
		if s == nil {
			s = &KindSummary{Run: gr.Rank.Run, Class: gr.Class}
			acc[k] = s
			order = append(order, k)
			cats[k] = map[classify.Category]*CategoryStat{}
			ranks[k] = map[window.RankID]int{}
		}
		s.Devices++
		s.Steps = max(s.Steps, gr.Steps)
		w := max(gr.Steps, 1)
		s.Windows += w
		s.KernelNS += gr.KernelNS
		s.BusyNS += gr.BusyNS
		s.SpanNS += gr.SpanNS
		s.IdleNS += gr.IdleNS
		s.Idle.Add(gr.Idle)
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
		ri, ok := ranks[k][gr.Rank.ID]
		if !ok {
			ri = len(s.PerRank)
			ranks[k][gr.Rank.ID] = ri
			s.PerRank = append(s.PerRank, 0)
			rankWin[k] = append(rankWin[k], 0)
			rankOf[k] = append(rankOf[k], gr.Rank)
		}
		s.PerRank[ri] += gr.KernelNS
		rankWin[k][ri] += int64(w)
	}
	out := make([]KindSummary, 0, len(order))
	for _, k := range order {
		s := acc[k]
		s.Ranks = len(s.PerRank)
		// Groups come by rank, so ranks are in rank order; a tie goes to
		// the first.
		best := 0
		for i := range s.PerRank {
			s.PerRank[i] = stats.PerStep(s.PerRank[i], int(rankWin[k][i]))
			if s.PerRank[i] > s.PerRank[best] {
				best = i
			}
		}
		s.MaxRank = rankOf[k][best]
		s.RankSpread = stats.Of(slices.Clone(s.PerRank))
		s.Categories = categoryList(cats[k], s.KernelNS, s.SpanNS, s.Windows)
		if k.class.Scope == step.InStep {
			var spans, periods, gaps, tokens []int64
			var tokSpan, tokSum int64
			for i := range g.Steps {
				r := &g.Steps[i]
				if r.Rank.Run != k.run || step.ClassOf(r.Step.Kind) != k.class {
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
			s.StepSpan = stats.Of(spans)
			s.Periods = len(periods)
			s.PeriodP50, s.GapP50 = stats.Of(periods).P50, stats.Of(gaps).P50
			s.TokenSteps, s.TokensP50, s.NSPerToken = len(tokens), stats.Of(tokens).P50, perToken(tokSpan, tokSum)
		}
		out = append(out, *s)
	}
	return out
}

// perToken is span over tokens: the step time per token; nil for no
// tokens, where it is undefined (never 0, never negative).
func perToken(spanNS, tokens int64) *float64 {
	if tokens <= 0 {
		return nil
	}
	v := float64(spanNS) / float64(tokens)
	return &v
}
