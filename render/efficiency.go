package render

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/interconnect"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/step"
)

// Efficiency writes the efficiency of the inputs (traceq efficiency):
// per step kind the answer line (step time against its speed of light),
// the devices and what priced the CUDA-graph replays, then per step kind
// the categories and per run the op shapes with the most kernel time.
func Efficiency(w io.Writer, r *efficiency.Result, opt Options) error {
	switch opt.Format {
	case "json":
		return writeJSON(w, efficiencyDoc(r))
	case "csv":
		return efficiencyCSV(w, r)
	case "markdown", "text", "":
	default:
		return CheckFormat(opt.Format)
	}
	md := opt.Format == "markdown"
	var sb strings.Builder
	line := func(s string) {
		if md {
			sb.WriteString("- ")
		}
		sb.WriteString(Printable(s) + "\n")
	}
	if len(r.Steps) == 0 {
		line("no GPU activity" + kindSuffix(r.Filter))
		_, err := io.WriteString(w, sb.String())
		return err
	}
	runs := runsOf(r)
	for _, s := range r.Steps {
		line(EfficiencyLine(&s, runs > 1))
	}
	for _, l := range deviceLines(r) {
		line(l)
	}
	for _, l := range graphLines(r) {
		line(l)
	}
	for _, l := range hintLines(r) {
		line(l)
	}
	efficiencyTables(&sb, r, opt)
	_, err := io.WriteString(w, sb.String())
	return err
}

// EfficiencyTables writes, per class, the categories' efficiency and, per
// run, the op shapes with the most kernel time (text or markdown): the
// tables of traceq efficiency, breakdown --detail efficiency and the
// report.
func EfficiencyTables(w io.Writer, r *efficiency.Result, opt Options) error {
	var sb strings.Builder
	efficiencyTables(&sb, r, opt)
	_, err := io.WriteString(w, sb.String())
	return err
}

func efficiencyTables(sb *strings.Builder, r *efficiency.Result, opt Options) {
	md := opt.Format == "markdown"
	runs := runsOf(r)
	for _, s := range r.Steps {
		title := s.Class.String() + " · efficiency per category, ms per step"
		if runs > 1 {
			title = s.Run + " · " + title
		}
		sb.WriteString("\n")
		heading(sb, title, opt)
		categoryTable(r, &s).Write(sb, md)
	}
	for _, run := range runNames(r) {
		if !slices.ContainsFunc(r.Ops, func(o efficiency.OpRow) bool { return o.Run == run }) {
			continue // no kernel of the run has a CPU op: the hint says so
		}
		title := "op shapes, most kernel time first"
		if runs > 1 {
			title = run + " · " + title
		}
		sb.WriteString("\n")
		heading(sb, title, opt)
		t, more := opTable(r, run, opt.top())
		t.Write(sb, md)
		if more > 0 {
			sb.WriteString(fmt.Sprintf("\n(%d more op shapes: --top, or --format json for all)\n", more))
		}
	}
}

// Priced reports whether r priced any kernel: what decides whether
// breakdown and report show efficiency at all.
func Priced(r *efficiency.Result) bool {
	if r == nil {
		return false
	}
	for _, s := range r.Steps {
		if s.ModelledNS > 0 {
			return true
		}
	}
	return false
}

func kindSuffix(f step.Filter) string {
	c, on := f.Class()
	if !on {
		return ""
	}
	return " in " + c.String() + " windows"
}

func runsOf(r *efficiency.Result) int { return len(runNames(r)) }

func runNames(r *efficiency.Result) []string {
	var names []string
	for _, s := range r.Steps {
		if len(names) == 0 || names[len(names)-1] != s.Run {
			names = append(names, s.Run)
		}
	}
	return names
}

// EfficiencyLine is a step kind's answer: its step time, kernel time and
// speed of light per step, and how much of it a model priced. "decode:
// step 1.011 ms (p50), kernels 0.950 ms/step; at the speed of light
// 0.520 ms/step (modelled 71.0% of kernel time)". Breakdown's first
// screen and the report print the same line.
func EfficiencyLine(s *efficiency.StepRow, withRun bool) string {
	var b strings.Builder
	if withRun {
		b.WriteString(s.Run + " · ")
	}
	b.WriteString(s.Class.String() + ": ")
	if s.Class.Scope == step.InStep {
		b.WriteString("step " + MSf(s.SpanP50) + " ms (p50), ")
	}
	fmt.Fprintf(&b, "kernels %s ms/%s; %s", MS(stats.PerStep(s.KernelNS, s.Windows)), perWhat(s), SpeedOfLight(s))
	return b.String()
}

// SpeedOfLight says a class's speed of light per step and what it rests
// on: "at the speed of light 0.520 ms/step (modelled 71.0% of kernel
// time, at 38.2% of its roofline; …)".
func SpeedOfLight(s *efficiency.StepRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "at the speed of light %s ms/%s (modelled %s of kernel time", MS(stats.PerStep(s.SpeedOfLightNS, s.Windows)), perWhat(s),
		Pct(stats.Ratio(s.ModelledNS, s.KernelNS)))
	if s.ModelledNS > 0 {
		fmt.Fprintf(&b, ", at %s of its roofline", Pct(efficiency.Efficiency(s.RooflineNS, s.ModelledNS)))
	}
	if s.LinkedNS > 0 {
		// Each figure in its own unit: at a link's bus bandwidth the
		// collectives are often under a microsecond a step.
		per := "/" + perWhat(s)
		fmt.Fprintf(&b, "; sized collectives %s%s, %s%s at %s%s", msOrUS(stats.PerStep(s.LinkedNS, s.Windows)), per,
			msOrUS(stats.PerStep(s.LinkNS, s.Windows)), per, s.Link.Label(), linkFrom(s.Link))
	}
	b.WriteString(")")
	return b.String()
}

// msOrUS is a time a step in ms, or under a millisecond in µs to one
// decimal: "4.742 ms", "0.2 µs".
func msOrUS(ns int64) string {
	if ns < 1e6 {
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) + " µs"
	}
	return MS(ns) + " ms"
}

// linkFrom says where an assumed link came from, after its label
// (docs/definitions.md#the-link): ", the V100 SXM2's default link in
// 'traceq gpus'"; "" for a link given.
func linkFrom(l *interconnect.Link) string {
	if l == nil || !l.Assumed() {
		return ""
	}
	return ", " + assumedWords(l)
}

// assumedWords names the GPU table row an assumed link is the default
// of: "the V100 SXM2's default link in 'traceq gpus'".
func assumedWords(l *interconnect.Link) string {
	return "the " + l.Device + "'s default link in 'traceq gpus'"
}

// stepRow finds the class row of run in r; nil when r has none.
func stepRow(r *efficiency.Result, run string, c step.Class) *efficiency.StepRow {
	if r == nil {
		return nil
	}
	for i := range r.Steps {
		if r.Steps[i].Run == run && r.Steps[i].Class == c {
			return &r.Steps[i]
		}
	}
	return nil
}

// perWhat is the unit of a step kind's per-window figures.
func perWhat(s *efficiency.StepRow) string {
	if s.Class == step.WholeTrace {
		return "device"
	}
	return "step"
}

// deviceLines say which table row each distinct device took.
func deviceLines(r *efficiency.Result) []string {
	type key struct {
		name string
		spec string
		flag bool
	}
	count := map[key]int{}
	var order []key
	for _, d := range r.Devices {
		k := key{name: d.Name, flag: d.ByFlag}
		if d.Spec != nil {
			k.spec = d.Spec.Name
		}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	var out []string
	for _, k := range order {
		name := strconv.Quote(k.name)
		if k.name == "" {
			for _, d := range r.Devices {
				if d.Name == "" && (d.Spec == nil && k.spec == "" || d.Spec != nil && d.Spec.Name == k.spec) {
					name = fmt.Sprintf(`"" (%d SMs)`, d.SMs)
					break
				}
			}
		}
		n := ""
		if count[k] > 1 {
			n = fmt.Sprintf(" ×%d", count[k])
		}
		var spec *efficiency.Device
		for i := range r.Devices {
			if r.Devices[i].Spec != nil && r.Devices[i].Spec.Name == k.spec {
				spec = &r.Devices[i]
				break
			}
		}
		switch {
		case k.spec == "":
			out = append(out, fmt.Sprintf("device %s%s: unknown to the GPU table, nothing priced: give --gpu NAME ('traceq gpus' lists them) or your own row with --gpu-spec FILE", name, n))
		default:
			g := spec.Spec
			how := "matched by name"
			if k.name == "" {
				how = "matched by SM count and memory"
			}
			if k.flag {
				how = "chosen with --gpu"
			}
			peaks := []string{}
			for _, d := range []string{"bf16", "fp8", "fp4", "fp32"} {
				dt, _ := gpuspec.ParseDType(d)
				if f := g.Peak[dt]; f.Known() {
					peaks = append(peaks, d+" "+f.Text+markSuffix(f.Marks))
				}
			}
			out = append(out, fmt.Sprintf("device %s%s: row %s (%s; sources: 'traceq gpus'): dense TFLOP/s %s; %s TB/s; %d SMs", name, n, g.Name, how,
				strings.Join(peaks, ", "), figureText(g.Memory), g.SMs))
		}
	}
	return out
}

// graphLines say how the CUDA-graph replays were priced, or how to price
// them.
func graphLines(r *efficiency.Result) []string {
	var out []string
	var total int64
	for _, s := range r.Steps {
		total += s.KernelNS
	}
	for _, g := range r.Graphs {
		switch {
		case g.Matched > 0:
			out = append(out, fmt.Sprintf("CUDA graphs (%s): %d of %d replayed kernels (%s of their time) matched with the captured launches of %s",
				g.Path, g.Matched, g.Kernels, Pct(stats.Ratio(g.MatchedNS, g.KernelNS)), strings.Join(g.Captures, ", ")))
		default:
			out = append(out, fmt.Sprintf("CUDA graphs (%s): %d replayed kernels, %s of the kernel time, have no CPU op: give the graph's capture trace with --capture FILE (vLLM and SGLang write one beside the trace, see docs/efficiency.md#cuda-graphs)",
				g.Path, g.Kernels, Pct(stats.Ratio(g.KernelNS, total))))
		}
	}
	return out
}

// hintLines say what is unmodelled and, when no op has shapes, how to
// record them.
func hintLines(r *efficiency.Result) []string {
	var shaped bool
	for _, o := range r.Ops {
		if len(o.Dims) > 0 {
			shaped = true
			break
		}
	}
	var kernel, modelled int64
	for _, s := range r.Steps {
		kernel += s.KernelNS
		modelled += s.ModelledNS
	}
	if !shaped && len(r.Graphs) == 0 {
		return []string{"no kernel has a CPU op with recorded shapes: profile with torch.profiler(record_shapes=True) (docs/efficiency.md#recording-shapes)"}
	}
	if kernel == 0 || modelled == kernel {
		return nil
	}
	// The unmodelled ops with the most time.
	type un struct {
		name string
		ns   int64
		note string
	}
	var uns []un
	for _, o := range r.Ops {
		if o.Modelled {
			continue
		}
		found := false
		for i := range uns {
			if uns[i].name == o.Name {
				uns[i].ns += o.KernelNS
				found = true
			}
		}
		if !found {
			uns = append(uns, un{o.Name, o.KernelNS, o.Note})
		}
	}
	slices.SortFunc(uns, func(a, b un) int { return cmp.Or(cmp.Compare(b.ns, a.ns), cmp.Compare(a.name, b.name)) })
	var parts []string
	for i, u := range uns {
		if i == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", u.name, Pct(stats.Ratio(u.ns, kernel)), u.note))
	}
	s := "unmodelled: " + Pct(stats.Ratio(kernel-modelled, kernel)) + " of kernel time, counted as measured"
	if len(parts) > 0 {
		s += "; ops with most: " + strings.Join(parts, "; ")
	}
	return []string{s}
}

func categoryTable(r *efficiency.Result, s *efficiency.StepRow) *Table {
	t := &Table{Head: []string{"category", "kernel", "modelled", "roofline", "efficiency", "TFLOP/s", "TB/s", "SM coverage"},
		Right: []bool{false, true, true, true, true, true, true, true}}
	for _, c := range r.Categories {
		if c.Run != s.Run || c.Class != s.Class {
			continue
		}
		row := []string{c.Category.String(), MS(stats.PerStep(c.KernelNS, c.Windows)), Pct(stats.Ratio(c.ModelledNS, c.KernelNS))}
		if c.ModelledNS > 0 {
			fl := "—"
			if c.FLOPs > 0 {
				fl = rate(efficiency.Rate(c.FLOPs, c.ModelledNS))
			}
			row = append(row, MS(stats.PerStep(c.RooflineNS, c.Windows)), Pct(c.Efficiency()), fl, rate(efficiency.Rate(c.Bytes, c.ModelledNS)))
		} else {
			row = append(row, "—", "—", "—", "—")
		}
		row = append(row, coverageText(c.SM))
		t.Add(row...)
	}
	return t
}

func opTable(r *efficiency.Result, run string, top int) (*Table, int) {
	t := &Table{Head: []string{"op", "args", "instances", "kernel ms", "TFLOP/s", "TB/s", "FLOP/B", "roofline ms", "efficiency", "bound", "SM coverage"},
		Right: []bool{false, false, true, true, true, true, true, true, true, false, true}}
	// The rows are per device (issue 22's JSON): a run over several
	// devices names each row's, or its rows would look alike.
	ranks := deviceRanks(r, run)
	if ranks != nil {
		t.Head, t.Right = append([]string{"rank"}, t.Head...), append([]bool{false}, t.Right...)
	}
	n, more := 0, 0
	for _, o := range r.Ops {
		if o.Run != run {
			continue
		}
		if n == top {
			more++
			continue
		}
		n++
		row := []string{o.Name, clip(argsText(o.Dims, o.Types), 60), strconv.FormatInt(o.Instances, 10), MS(o.KernelNS)}
		if ranks != nil {
			row = append([]string{ranks[o.Device]}, row...)
		}
		if o.Modelled {
			fl := "—"
			if o.FLOPs > 0 {
				fl = rate(efficiency.Rate(o.FLOPs, o.KernelNS))
			}
			ai := "—"
			if o.FLOPs > 0 {
				ai = strconv.FormatFloat(efficiency.Intensity(o.FLOPs, o.Bytes), 'f', 1, 64)
			}
			bound := o.Bound.String()
			if o.UpperBound {
				bound += " (bytes ≤)"
			}
			row = append(row, fl, rate(efficiency.Rate(o.Bytes, o.KernelNS)), ai, MS(o.RooflineNS), Pct(o.Efficiency()), bound)
		} else {
			row = append(row, "—", "—", "—", "—", "—", "not modelled")
		}
		row = append(row, coverageText(o.SM))
		t.Add(row...)
	}
	return t, more
}

// deviceRanks names the devices of run's op rows when they are more than
// one: "rank 3" where the trace says (the host first when the run spans
// hosts: "node1 · rank 9"), else "device 3" (a device of several inputs,
// or of an input without a rank); nil for a run whose rows are all on one
// device.
func deviceRanks(r *efficiency.Result, run string) map[int32]string {
	inputs := map[int32][]int{}
	for _, o := range r.Ops {
		if o.Run == run && inputs[o.Device] == nil {
			inputs[o.Device] = []int{}
		}
	}
	if len(inputs) < 2 {
		return nil
	}
	hosts := map[string]bool{}
	for _, d := range r.Devices {
		if in, ok := inputs[d.Device]; d.Run == run && ok {
			inputs[d.Device] = append(in, d.Input)
			hosts[r.Inputs[d.Input].Host] = true
		}
	}
	out := map[int32]string{}
	for dev, in := range inputs {
		label := "device " + strconv.Itoa(int(dev))
		if len(in) == 1 && r.Inputs[in[0]].Rank != nil {
			label = "rank " + strconv.Itoa(*r.Inputs[in[0]].Rank)
			if h := r.Inputs[in[0]].Host; len(hosts) > 1 && h != "" {
				label = h + " · " + label
			}
		}
		out[dev] = Printable(label)
	}
	return out
}

// argsText writes an op's recorded arguments: tensors as [dims] and a
// short type, the rest left out.
func argsText(dims [][]int64, types []string) string {
	var parts []string
	for i, d := range dims {
		typ := ""
		if i < len(types) {
			typ = types[i]
		}
		if typ == "" || typ == "Scalar" || len(d) == 0 && !isTensorType(typ) {
			continue
		}
		var b strings.Builder
		b.WriteByte('[')
		for j, x := range d {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(x, 10))
		}
		b.WriteString("]" + shortType(typ))
		parts = append(parts, b.String())
	}
	return strings.Join(parts, " ")
}

func isTensorType(t string) bool { return t != "" && t != "Scalar" && !strings.HasSuffix(t, "List") }

// shortType abbreviates an element type: c10::BFloat16 → bf16.
func shortType(t string) string {
	switch t {
	case "c10::BFloat16":
		return "bf16"
	case "c10::Half":
		return "f16"
	case "float":
		return "f32"
	case "double":
		return "f64"
	case "long int":
		return "i64"
	case "int":
		return "i32"
	case "c10::Float8_e4m3fn":
		return "e4m3"
	case "c10::Float8_e5m2":
		return "e5m2"
	case "unsigned char":
		return "u8"
	case "signed char":
		return "i8"
	case "bool":
		return "b"
	}
	return ":" + t
}

// rate formats TFLOP/s or TB/s: three significant digits.
func rate(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func coverageText(c efficiency.Coverage) string {
	if c.KnownNS == 0 {
		return "—"
	}
	return Pct(c.Value())
}

func efficiencyCSV(w io.Writer, r *efficiency.Result) error {
	cw := csv.NewWriter(w)
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	cw.Write([]string{"run", "step_kind", "steps", "windows", "span_ns_p50", "kernel_ns", "modelled_ns", "roofline_ns", "linked_ns", "link_ns",
		"speed_of_light_ns", "replay_ns", "matched_ns", "link", "link_assumed_from"})
	for _, s := range r.Steps {
		link, from := "", ""
		if s.Link != nil {
			link, from = s.Link.Label(), csvText(s.Link.Device)
		}
		cw.Write([]string{csvText(s.Run), s.Class.String(), strconv.Itoa(s.Steps), strconv.Itoa(s.Windows), ftoa(s.SpanP50), i64(s.KernelNS),
			i64(s.ModelledNS), i64(s.RooflineNS), i64(s.LinkedNS), i64(s.LinkNS), i64(s.SpeedOfLightNS), i64(s.ReplayNS), i64(s.MatchedNS), link, from})
	}
	cw.Flush()
	io.WriteString(w, "\n")
	cw.Write([]string{"run", "step_kind", "category", "windows", "kernel_ns", "modelled_ns", "flops", "bytes", "roofline_ns", "efficiency", "sm_coverage"})
	for _, c := range r.Categories {
		cw.Write([]string{csvText(c.Run), c.Class.String(), c.Category.String(), strconv.Itoa(c.Windows), i64(c.KernelNS), i64(c.ModelledNS),
			i64(c.FLOPs), i64(c.Bytes), i64(c.RooflineNS), ftoa(c.Efficiency()), ftoa(c.SM.Value())})
	}
	cw.Flush()
	io.WriteString(w, "\n")
	cw.Write([]string{"run", "device", "op", "args", "category", "instances", "kernel_ns", "flops", "bytes", "roofline_ns", "efficiency", "bound",
		"modelled", "sm_coverage", "note"})
	for _, o := range r.Ops {
		bound := ""
		if o.Modelled {
			bound = o.Bound.String()
		}
		cw.Write([]string{csvText(o.Run), strconv.Itoa(int(o.Device)), csvText(o.Name), csvText(argsText(o.Dims, o.Types)), o.Category.String(),
			i64(o.Instances), i64(o.KernelNS), i64(o.FLOPs), i64(o.Bytes), i64(o.RooflineNS), ftoa(o.Efficiency()), bound,
			strconv.FormatBool(o.Modelled), ftoa(o.SM.Value()), csvText(o.Note)})
	}
	cw.Flush()
	return cw.Error()
}
