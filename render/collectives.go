package render

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// opNames are the collectives as NCCL and nccl-tests spell them.
var opNames = map[string]string{
	"allreduce": "AllReduce", "allgather": "AllGather", "reduce_scatter": "ReduceScatter", "all_to_all": "AllToAll",
	"send_recv": "SendRecv", "broadcast": "Broadcast", "reduce": "Reduce",
}

// OpName is a collective's display name: "AllReduce" for "allreduce".
func OpName(op string) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return op
}

// GBps formats a bandwidth in GB/s with three significant digits or so.
func GBps(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	if v >= 0.001 || v == 0 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64) // never "0.000" for a bandwidth
}

// RankLabels names the ranks of a run for tables and charts: "rank 3"
// where the trace says, else the process ("pid 149") when the ranks are
// processes of one input, else the input's short name; the host first
// when the run spans hosts ("node1 · rank 9").
func RankLabels(ranks []collectives.Member) map[window.RankID]string {
	paths := map[string]bool{}
	procs := map[string]int{}
	var all []string
	for _, r := range ranks {
		paths[r.Path] = true
		procs[r.Path]++
		all = append(all, r.Path)
	}
	short := shortPaths(all)
	out := map[window.RankID]string{}
	for i, r := range ranks {
		var s string
		switch {
		case r.Number != nil:
			s = numbered(r.Rank)
		case len(paths) == 1:
			s = "pid " + strconv.FormatInt(r.PID, 10)
		default:
			s = clipLeft(short[i], 32)
			if procs[r.Path] > 1 {
				s += " pid " + strconv.FormatInt(r.PID, 10)
			}
		}
		out[r.ID] = Printable(onHost(r.Rank, s))
	}
	return out
}

// collLabels names every rank of every run of ct.
func collLabels(ct *collectives.Table) map[window.RankID]string {
	out := map[window.RankID]string{}
	for _, run := range ct.Runs {
		for k, v := range RankLabels(run.Ranks) {
			out[k] = v
		}
	}
	return out
}

func kindPrefix(o *collectives.Op, runs int) string {
	s := o.Class.String()
	switch {
	case o.Class.Scope == step.Whole:
		s = "whole trace"
	case o.Class.Scope == step.Outside:
		s = "outside any step"
	case o.Class.Kind == step.Generic:
		s = "steps"
	}
	if runs > 1 && o.Run != "" {
		s = o.Run + " " + s
	}
	return s
}

// CollectiveVerdicts are the answer lines: per run and step kind, the
// collective with the most kernel time, its share, how much of it is
// waiting and for whom, its transfer time and bus bandwidth against the
// link. Then, when no --link was given, the line saying what it needs,
// or which link of the devices was assumed.
func CollectiveVerdicts(ct *collectives.Table) []string {
	labels := collLabels(ct)
	var out []string
	for i := 0; i < len(ct.Ops); {
		j := i + 1
		for j < len(ct.Ops) && ct.Ops[j].Run == ct.Ops[i].Run && ct.Ops[j].Class == ct.Ops[i].Class {
			j++
		}
		line := kindPrefix(&ct.Ops[i], len(ct.Runs)) + ": " + verdict(&ct.Ops[i], ct, labels)
		if j > i+1 {
			var also []string
			for _, o := range ct.Ops[i+1 : j] {
				also = append(also, opTitle(&o)+" "+Pct(o.Share))
			}
			line += " (also " + strings.Join(also, ", ") + ")"
		}
		out = append(out, line)
		i = j
	}
	if ct.Link == nil && !ct.Links.Given() && len(ct.Ops) > 0 && anyBus(ct) {
		line := "link share: give --link with the interconnect's bandwidth per direction in GB/s " +
			"(an nccl-tests busbw measured on the same machine), or one of " + collectives.LinkNames()
		if anyScope(ct, collectives.ScopeInter) {
			line += "; for a run over hosts, --link intra=NAME|GBPS,inter=NAME|GBPS (between hosts: " + collectives.NetLinkNames() + ")"
		}
		out = append(out, line)
	} else if l := ct.Link; l != nil && l.Assumed() {
		// No link given: the devices' bounds the communicators on one
		// host (or of unknown hosts); those across hosts have none.
		if slices.ContainsFunc(ct.Ops, func(o collectives.Op) bool { return o.Link != nil && o.BusGBps != nil }) {
			out = append(out, "link share: against "+l.Label()+", "+GBps(l.GBps)+" GB/s per direction"+linkFrom(&l.Link)+
				"; give --link for another (an nccl-tests busbw measured on the same machine is the truest)")
		}
		if anyScopeBus(ct, collectives.ScopeInter) {
			out = append(out, "link share: no link for the communicators "+scopeWords(collectives.ScopeInter)+
				": give --link intra=NAME|GBPS,inter=NAME|GBPS (between hosts: "+collectives.NetLinkNames()+")")
		}
	} else if ct.Links.Given() && ct.Links.All == nil {
		for _, sc := range []collectives.Scope{collectives.ScopeIntra, collectives.ScopeInter} {
			if ct.Links.For(sc) == nil && anyScopeBus(ct, sc) {
				out = append(out, "link share: no "+sc.String()+"= link given for the communicators "+scopeWords(sc))
			}
		}
	}
	return out
}

// anyScope reports whether an op of ct has scope sc.
func anyScope(ct *collectives.Table, sc collectives.Scope) bool {
	for i := range ct.Ops {
		if ct.Ops[i].Scope == sc {
			return true
		}
	}
	return false
}

// anyScopeBus reports whether an op of scope sc has a bus bandwidth.
func anyScopeBus(ct *collectives.Table, sc collectives.Scope) bool {
	for i := range ct.Ops {
		if ct.Ops[i].Scope == sc && ct.Ops[i].BusGBps != nil {
			return true
		}
	}
	return false
}

// scopeWords says where a communicator's ranks are.
func scopeWords(sc collectives.Scope) string {
	switch sc {
	case collectives.ScopeIntra:
		return "inside a host"
	case collectives.ScopeInter:
		return "across hosts"
	}
	return "on hosts unknown"
}

// rankSourceText says how a source named ranks, after "ranks named ".
var rankSourceText = map[trace.RankSource]string{
	trace.RankFromNCCL:       "by NCCL's ncclCommInitRank payload",
	trace.RankFromThreadName: "by their thread names",
	trace.RankFromEnv:        "by the rank variables of their environment",
	trace.RankFromDevice:     "by the CUDA device of each process",
	trace.RankFromFileName:   "by their file names",
}

// RankSources are the lines saying, per run whose ranks the traces do not
// state in Kineto's distributedInfo, what named them and which process
// each is: "ranks of RUN named by the CUDA device of each process: rank 0
// = pid 1234, rank 1 = pid 5678".
func RankSources(ct *collectives.Table) []string {
	var out []string
	for _, run := range ct.Runs {
		var src []trace.RankSource
		var who []string
		for _, r := range run.Ranks {
			if r.Number == nil || rankSourceText[r.Source] == "" {
				continue
			}
			if !slices.Contains(src, r.Source) {
				src = append(src, r.Source)
			}
			w := "rank " + strconv.Itoa(*r.Number)
			if r.Name != "" && r.Name != strconv.Itoa(*r.Number) {
				w += " (" + r.Name + ")"
			}
			if r.PID != 0 {
				w += " = pid " + strconv.FormatInt(r.PID, 10)
			}
			who = append(who, w)
		}
		if len(src) == 0 {
			continue
		}
		how := make([]string, len(src))
		for i, s := range src {
			how[i] = rankSourceText[s]
		}
		name := "the ranks"
		if len(ct.Runs) > 1 && run.Name != "" {
			name = "the ranks of " + run.Name
		}
		out = append(out, name+" are named "+strings.Join(how, ", ")+" (docs/nsys.md#ranks): "+strings.Join(who, ", "))
	}
	return out
}

func anyBus(ct *collectives.Table) bool {
	for _, o := range ct.Ops {
		if o.BusGBps != nil {
			return true
		}
	}
	return false
}

func opTitle(o *collectives.Op) string {
	s := OpName(o.Op)
	if o.Phase != "" {
		s += " " + o.Phase
	}
	switch {
	case o.Group != "":
		s += " (group " + o.Group + ")"
	case o.Host != "":
		s += " (" + o.Host + ")"
	}
	return s
}

// ruleWords says which rules formed an op's communicator
// (docs/definitions.md#communicators).
func ruleWords(o *collectives.Op) string {
	var who string
	switch {
	case o.Group != "":
		who = "group " + o.Group
		if o.GroupRanks != "" {
			who += ", ranks " + o.GroupRanks
		}
	case o.Host != "":
		who = "the ranks on " + o.Host
	default:
		who = "every rank that ran it"
	}
	var args []string
	var parts []string
	for _, r := range o.Rules {
		switch r {
		case collectives.RuleArgs:
			args = append(args, "on the kernels")
		case collectives.RuleCPUOp:
			args = append(args, "on the record_param_comms ops that launched them")
		case collectives.RulePGConfig:
			how := "the smallest group of consecutive ranks"
			if o.Op == "all_to_all" {
				how = "the largest group"
			}
			parts = append(parts, "by pg_config for kernels without process-group args ("+how+" the rank is in)")
		case collectives.RuleHost:
			parts = append(parts, "by host: kernels that work only inside a host, and no pg_config")
		case collectives.RuleOne:
			parts = append(parts, "as one: no process-group args, no pg_config")
		}
	}
	if len(args) > 0 {
		parts = append([]string{"named by the collective args " + strings.Join(args, " and ")}, parts...)
	}
	return "communicator: " + who + " — " + strings.Join(parts, "; ")
}

func verdict(o *collectives.Op, ct *collectives.Table, labels map[window.RankID]string) string {
	link := o.Link
	var sb strings.Builder
	sb.WriteString(opTitle(o) + " " + Pct(o.Share) + " of kernel time")
	if o.UpperBound {
		sb.WriteString("; one rank, so waiting cannot be told from transfer: transfer ≤ " + perStep(o, o.TransferNS))
	} else {
		if s := o.Straggler; s != nil && s.Distinct {
			fmt.Fprintf(&sb, "; %s of it waiting for %s (last in %s of %d instances)", Pct(stats.Ratio(o.WaitNS, o.KernelNS)),
				labels[s.ID], Pct(s.Share()), s.Instances)
		} else if s != nil {
			fmt.Fprintf(&sb, "; %s of it waiting, for no rank in particular (the most often last, %s, in %s of %d instances)",
				Pct(stats.Ratio(o.WaitNS, o.KernelNS)), labels[s.ID], Pct(s.Share()), s.Instances)
		}
		sb.WriteString("; transfer " + perStep(o, o.TransferNS))
	}
	switch {
	case o.BusGBps != nil:
		at := " at "
		if o.UpperBound {
			at = " at ≥ "
		}
		sb.WriteString(at + GBps(*o.BusGBps) + " GB/s busbw")
		if o.LinkShare != nil && link.Measured() {
			sb.WriteString(" = " + Pct(*o.LinkShare) + " of what " + link.Label() + " reached at these sizes")
		} else if o.LinkShare != nil {
			sb.WriteString(" = " + Pct(*o.LinkShare) + " of " + link.Label())
			if ct.Links.Given() && ct.Links.All == nil {
				sb.WriteString(" (" + scopeWords(o.Scope) + ")")
			}
		}
		if o.SizedInstances < o.Instances {
			fmt.Fprintf(&sb, " (the %d of %d instances of known size)", o.SizedInstances, o.Instances)
		}
	case o.AlgGBps != nil:
		sb.WriteString(" at " + GBps(*o.AlgGBps) + " GB/s algbw (no bus factor: " + noBusFactor(o) + ")")
	default:
		sb.WriteString("; " + noBandwidth(o, ct.BytesPerToken))
	}
	if o.UnmatchedInstances > 0 {
		fmt.Fprintf(&sb, "; %d instances (%s ms) not found on every rank", o.UnmatchedInstances, MS(o.UnmatchedNS))
	}
	if o.Op == "all_to_all" && o.TokenInstances > 0 {
		fmt.Fprintf(&sb, "; token imbalance %s× (the busiest rank's tokens over the mean)", strconv.FormatFloat(o.TokenImbalance(), 'f', 2, 64))
	}
	if o.SplitInstances > 0 {
		fmt.Fprintf(&sb, "; token imbalance %s× by the split sizes (the busiest rank's rows sent or received over the mean)",
			strconv.FormatFloat(o.SplitImbalance(), 'f', 2, 64))
	}
	return sb.String()
}

// perStep says an op's summed time per step ("0.254 ms/step"), or over
// the whole trace for a trace without steps.
func perStep(o *collectives.Op, ns int64) string {
	if o.Class.Scope != step.InStep {
		return MS(ns) + " ms in all"
	}
	return MS(stats.PerStep(ns, max(o.Steps, 1))) + " ms/step"
}

// noBusFactor says why an op with an algorithm bandwidth has no bus
// bandwidth.
func noBusFactor(o *collectives.Op) string {
	switch {
	case strings.HasPrefix(factorText(o.Op), "?"):
		return "none for this op"
	case o.GroupSize == 1:
		return "a group of one rank"
	}
	return "group size unknown"
}

// noBandwidth says why an op has no bandwidth at all.
func noBandwidth(o *collectives.Op, bytesPerToken int64) string {
	switch {
	case o.SizedInstances > 0:
		return "transfer time 0 in every instance of known size: no bandwidth"
	case o.UnusableArgs > 0:
		return "message size unknown: the collective args give none (no element count, a dtype of unknown size, or over a TiB)"
	case bytesPerToken > 0 && o.Class.Scope != step.InStep:
		return "message size unknown: no collective args, and --bytes-per-token needs a step's token count (these kernels are outside any step)"
	case bytesPerToken > 0:
		return "message size unknown: no collective args, and --bytes-per-token needs the token count of the step markers (these give none)"
	}
	return "message size unknown (no collective args: give --bytes-per-token)"
}

// CollectiveWarnings are the warnings about collective args the match
// contradicts: a group size other than the ranks that ran the op, sizes
// that differ across the ranks of an instance.
func CollectiveWarnings(ct *collectives.Table) []string {
	var out []string
	for i := range ct.Ops {
		o := &ct.Ops[i]
		what := kindPrefix(o, len(ct.Runs)) + " " + opTitle(o)
		if o.ArgsGroupSize > 0 && o.ArgsGroupSize != o.GroupSize {
			out = append(out, fmt.Sprintf("%s: the collective args say group size %d, but %s ran it: bus bandwidth uses %d",
				what, o.ArgsGroupSize, plural(len(o.Ranks), "rank"), o.GroupSize))
		}
		if o.SizeConflicts > 0 {
			out = append(out, fmt.Sprintf("%s: in %d of %d instances the ranks' collective args disagree on the message size (dtype or element count): used the majority's",
				what, o.SizeConflicts, o.Instances))
		}
	}
	return out
}

// Collectives writes the collectives analysis: the answer lines, then per
// op the per-rank table and the per-size table; then where the settings
// not given on the command line came from.
func Collectives(w io.Writer, ct *collectives.Table, set *settings.Settings, opt Options) error {
	switch opt.Format {
	case "json":
		doc := collectivesDoc(ct)
		doc.Settings = jsonSettings(set)
		return writeJSON(w, doc)
	case "csv":
		return collectivesCSV(w, ct)
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	var sb strings.Builder
	md := opt.Format == "markdown"
	if len(ct.Ops) == 0 {
		where := "the inputs"
		if c, on := ct.Filter.Class(); on {
			where = c.String() + " steps of the inputs"
		}
		sb.WriteString("no collective kernels (category communication/*) in " + where + "\n")
		_, err := io.WriteString(w, sb.String())
		return err
	}
	for _, v := range append(CollectiveVerdicts(ct), RankSources(ct)...) {
		if md {
			sb.WriteString("- ")
		}
		sb.WriteString(Printable(v) + "\n")
	}
	CollectiveTables(&sb, ct, opt)
	settingsLine(&sb, set, md)
	_, err := io.WriteString(w, sb.String())
	return err
}

// CollectiveTables writes, per op, its per-rank and per-size tables, in
// text or (opt.Format "markdown") markdown: the part of Collectives after
// the answer lines. With opt.Top > 0, a per-size table keeps the opt.Top
// sizes with the most transfer time.
func CollectiveTables(sb *strings.Builder, ct *collectives.Table, opt Options) {
	md := opt.Format == "markdown"
	labels := collLabels(ct)
	for i := range ct.Ops {
		o := &ct.Ops[i]
		title := kindPrefix(o, len(ct.Runs)) + " · " + opTitle(o)
		if o.GroupRanks != "" {
			title += " " + o.GroupRanks
		}
		sb.WriteByte('\n')
		heading(sb, Printable(title)+" · "+plural(len(o.Ranks), "rank")+" · "+plural(int(o.Instances), "instance"), opt)
		sb.WriteString(Printable(ruleWords(o)))
		if md {
			sb.WriteString("  ") // a line break inside the paragraph
		}
		sb.WriteString("\n")
		if !o.UpperBound {
			over := "over the whole trace"
			if o.Class.Scope == step.InStep {
				over = "summed over " + StepCount(max(o.Steps, 1), o.Class.Kind)
			}
			sb.WriteString("per rank, " + over + ": its kernels' time = waiting for the last rank + transfer (the instance's shortest kernel)")
			if o.UnmatchedInstances > 0 {
				fmt.Fprintf(sb, "; %d instances (%s ms) not on every rank are left out", o.UnmatchedInstances, MS(o.UnmatchedNS))
			}
			sb.WriteString("\n\n")
		}
		if o.UpperBound {
			r := o.Ranks[0]
			fmt.Fprintf(sb, "one rank (%s): its kernel time, %s ms, bounds the transfer time from above\n\n",
				labels[r.ID], MS(r.KernelNS))
		} else {
			rt := &Table{Head: []string{"rank", "kernel ms", "wait ms", "transfer ms", "wait share", "last arrivals"},
				Right: []bool{false, true, true, true, true, true}}
			for _, r := range o.Ranks {
				label := labels[r.ID]
				if s := o.Straggler; s != nil && s.Distinct && s.ID == r.ID {
					label += " (straggler)"
				}
				rt.Add(label, MS(r.KernelNS), MS(r.WaitNS), MS(r.TransferNS), Pct(stats.Ratio(r.WaitNS, r.KernelNS)),
					strconv.FormatInt(r.LastArrivals, 10)+" ("+Pct(stats.Ratio(r.LastArrivals, o.Instances))+")")
			}
			rt.Write(sb, md)
			sb.WriteByte('\n')
		}
		n := "group size unknown"
		if o.GroupSize > 0 {
			n = "group size " + strconv.Itoa(o.GroupSize)
		}
		if o.ArgsGroupSize > 0 && o.ArgsGroupSize != o.GroupSize {
			n += " (the args say " + strconv.Itoa(o.ArgsGroupSize) + ")"
		}
		if o.SizeConflicts > 0 {
			n += fmt.Sprintf("; %d instances whose ranks' args disagree on the size: the majority's", o.SizeConflicts)
		}
		bound := ""
		if o.UpperBound {
			bound = "; one rank: transfer is an upper bound, bandwidths lower bounds"
		}
		fmt.Fprintf(sb, "message sizes (nccl-tests' convention, %s; busbw = algbw × %s)%s\n\n", n, factorText(o.Op), bound)
		st := &Table{Head: []string{"bytes", "instances", "transfer ms", "algbw GB/s", "busbw GB/s"},
			Right: []bool{true, true, true, true, true}}
		if o.Link != nil {
			st.Head, st.Right = append(st.Head, "of "+o.Link.Label()), append(st.Right, true)
		}
		st.Head, st.Right = append(st.Head, "source"), append(st.Right, false)
		row := func(b string, n, transfer int64, bw collectives.Bandwidth, src string) {
			cells := []string{b, strconv.FormatInt(n, 10), MS(transfer), optGB(bw.AlgGBps), optGB(bw.BusGBps)}
			if o.Link != nil {
				cells = append(cells, optPct(bw.LinkShare))
			}
			st.Add(append(cells, src)...)
		}
		sizes, cut := topSizes(o.Sizes, opt.Top)
		for _, s := range sizes {
			b := "unknown"
			if s.Bytes >= 0 {
				b = strconv.FormatInt(s.Bytes, 10)
			}
			row(b, s.Instances, s.TransferNS, s.Bandwidth, s.Source.String())
		}
		if cut > 0 {
			cells := make([]string, len(st.Head))
			cells[0], cells[len(cells)-1] = fmt.Sprintf("%d more sizes", cut), "traceq collectives lists all"
			st.Add(cells...)
		}
		if len(o.Sizes) > 1 && o.SizedInstances > 0 {
			src := ""
			for _, s := range o.Sizes {
				if s.Bytes >= 0 && src == "" {
					src = s.Source.String()
				} else if s.Bytes >= 0 && src != s.Source.String() {
					src = "mixed"
				}
			}
			row("all known", o.SizedInstances, o.SizedTransferNS, o.Bandwidth, src)
		}
		st.Write(sb, md)
		if o.Link != nil && ct.Links.Given() && ct.Links.All == nil {
			fmt.Fprintf(sb, "\nthe link: %s, %s GB/s per direction (%s)%s: %s\n", o.Link.Label(), GBps(o.Link.GBps), scopeWords(o.Scope), linkFrom(&o.Link.Link), o.Link.About)
		}
		if o.Op == "all_to_all" && o.TokenInstances > 0 {
			fmt.Fprintf(sb, "\ntokens: in %d of %d instances every rank's step gives its token count; the busiest rank has %s× the mean, on average "+
				"(token imbalance: an all-to-all moves each rank's own tokens, so part of the others' wait is the busiest rank's longer transfer)\n",
				o.TokenInstances, o.Instances, strconv.FormatFloat(o.TokenImbalance(), 'f', 2, 64))
		}
		if o.SplitInstances > 0 {
			busiest := 0
			for i, r := range o.Ranks {
				if r.SplitCount > o.Ranks[busiest].SplitCount {
					busiest = i
				}
			}
			fmt.Fprintf(sb, "\nsplit sizes: in %d of %d instances every rank's kernel gives the rows it sends and receives; the busiest rank moves %s× the mean, "+
				"on average; the most over them: %s, %d rows (token imbalance by the split sizes: the larger of each rank's two directions)\n",
				o.SplitInstances, o.Instances, strconv.FormatFloat(o.SplitImbalance(), 'f', 2, 64), Printable(labels[o.Ranks[busiest].ID]), o.Ranks[busiest].SplitCount)
		}
	}
}

// topSizes keeps, when top > 0 and there are more rows, the top rows with
// the most transfer time, in their order, and says how many it left out.
func topSizes(sizes []collectives.Size, top int) ([]collectives.Size, int) {
	if top <= 0 || len(sizes) <= top {
		return sizes, 0
	}
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(sizes[b].TransferNS, sizes[a].TransferNS) })
	keep := idx[:top]
	slices.Sort(keep)
	out := make([]collectives.Size, len(keep))
	for i, k := range keep {
		out[i] = sizes[k]
	}
	return out, len(sizes) - top
}

func factorText(op string) string {
	switch op {
	case "allreduce":
		return "2(n−1)/n"
	case "allgather", "reduce_scatter", "all_to_all":
		return "(n−1)/n"
	case "broadcast", "send_recv", "reduce":
		return "1"
	}
	return "? (no nccl-tests factor for " + op + ")"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func optGB(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return GBps(*p)
}

func optPct(p *float64) string {
	if p == nil {
		return "—"
	}
	return Pct(*p)
}

func optFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return ftoa(*p)
}

// collectivesCSV writes three tables separated by an empty line: ops,
// ranks, sizes.
func collectivesCSV(w io.Writer, ct *collectives.Table) error {
	cw := csv.NewWriter(w)
	head := []string{"run", "step_kind", "op", "process_group", "process_group_ranks"}
	key := func(o *collectives.Op) []string {
		return []string{csvText(o.Run), o.Class.String(), o.Op, csvText(o.Group), csvText(o.GroupRanks)}
	}
	cw.Write(append(head, "group_size", "instances", "unmatched_instances", "unmatched_ns", "kernel_ns", "transfer_ns", "wait_ns",
		"share", "straggler_rank", "straggler_index", "straggler_last_arrivals", "upper_bound", "algbw_gbs", "busbw_gbs", "link_share",
		"phase", "host", "communicator_rules", "link_scope", "link", "token_imbalance", "link_assumed_from"))
	for i := range ct.Ops {
		o := &ct.Ops[i]
		srank, sidx, slast := "", "", ""
		if s := o.Straggler; s != nil {
			srank, sidx, slast = intOrEmpty(s.Number), strconv.Itoa(s.Index), strconv.FormatInt(s.LastArrivals, 10)
		}
		cw.Write(append(key(o), strconv.Itoa(o.GroupSize), strconv.FormatInt(o.Instances, 10), strconv.FormatInt(o.UnmatchedInstances, 10),
			strconv.FormatInt(o.UnmatchedNS, 10), strconv.FormatInt(o.KernelNS, 10), strconv.FormatInt(o.TransferNS, 10),
			strconv.FormatInt(o.WaitNS, 10), ftoa(o.Share), srank, sidx, slast, strconv.FormatBool(o.UpperBound),
			optFloat(o.AlgGBps), optFloat(o.BusGBps), optFloat(o.LinkShare),
			o.Phase, csvText(o.Host), ruleList(o), o.Scope.String(), linkLabel(o.Link), tokenImbalance(o), linkAssumedFrom(o.Link)))
	}
	cw.Flush()
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	cw.Write(append(head, "rank", "index", "path", "pid", "kernel_ns", "transfer_ns", "wait_ns", "last_arrivals", "phase", "host"))
	for i := range ct.Ops {
		o := &ct.Ops[i]
		for _, r := range o.Ranks {
			cw.Write(append(key(o), intOrEmpty(r.Number), strconv.Itoa(r.Index), csvText(r.Path), strconv.FormatInt(r.PID, 10),
				strconv.FormatInt(r.KernelNS, 10), strconv.FormatInt(r.TransferNS, 10), strconv.FormatInt(r.WaitNS, 10),
				strconv.FormatInt(r.LastArrivals, 10), o.Phase, csvText(o.Host)))
		}
	}
	cw.Flush()
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	cw.Write(append(head, "bytes", "instances", "transfer_ns", "algbw_gbs", "busbw_gbs", "link_share", "source", "phase", "host"))
	for i := range ct.Ops {
		o := &ct.Ops[i]
		for _, s := range o.Sizes {
			b := ""
			if s.Bytes >= 0 {
				b = strconv.FormatInt(s.Bytes, 10)
			}
			cw.Write(append(key(o), b, strconv.FormatInt(s.Instances, 10), strconv.FormatInt(s.TransferNS, 10),
				optFloat(s.AlgGBps), optFloat(s.BusGBps), optFloat(s.LinkShare), s.Source.String(), o.Phase, csvText(o.Host)))
		}
	}
	cw.Flush()
	return cw.Error()
}

// ruleList is an op's communicator rules, space-separated.
func ruleList(o *collectives.Op) string {
	parts := make([]string, len(o.Rules))
	for i, r := range o.Rules {
		parts[i] = r.String()
	}
	return strings.Join(parts, " ")
}

func linkLabel(l *collectives.Link) string {
	if l == nil {
		return ""
	}
	return l.Label()
}

// linkAssumedFrom is the GPU table row a link was assumed from, "" for a
// link given or none.
func linkAssumedFrom(l *collectives.Link) string {
	if l == nil {
		return ""
	}
	return csvText(l.Device)
}

// tokenImbalance is an op's token imbalance, "" when unknown.
func tokenImbalance(o *collectives.Op) string {
	if o.TokenInstances == 0 {
		return ""
	}
	return ftoa(o.TokenImbalance())
}
