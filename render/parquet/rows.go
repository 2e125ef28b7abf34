package parquet

import (
	"slices"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// activities writes one row per activity into its rank's part, in the
// trace's order (by start).
func (x *Exporter) activities(tbl *window.Table, parts, partOf []*rankPart, pids []int64) error {
	in := &tbl.Inputs[0]
	path, t, steps := in.Path, in.Trace, in.Steps
	// Per category id: its name and top level.
	var cats, tops []string
	// Per step: the values the optional columns point to (no allocation
	// per row).
	var index []int32
	var markers, kinds []string
	if steps != nil {
		index = make([]int32, len(steps.List))
		markers = make([]string, len(steps.List))
		kinds = make([]string, len(steps.List))
		for i := range steps.List {
			index[i] = int32(i)
			markers[i] = steps.List[i].Marker
			kinds[i] = steps.List[i].Kind.String()
		}
	}
	for i := range t.Activities {
		a := &t.Activities[i]
		name := t.Names[a.Name]
		id := int(tbl.ActivityCategory(0, i))
		for len(cats) <= id {
			c := tbl.Category(window.CatID(len(cats)))
			cats, tops = append(cats, c.String()), append(tops, c.Top.String())
		}
		cat, top := cats[id], tops[id]
		row := Activity{Input: path, PID: pids[a.Proc], Device: a.Device, Stream: a.Stream,
			Kind: a.Kind.String(), Name: name, Category: cat, Top: top,
			StartNS: int64(a.Start), DurNS: a.Dur, Correlation: a.Corr, StepKind: kindAll}
		if steps != nil {
			s := steps.Of[i]
			if s < 0 {
				row.StepKind = kindNone
			} else {
				row.Step, row.StepMarker = &index[s], &markers[s]
				row.StepKind = kinds[s]
			}
		}
		p := partOf[a.Proc]
		p.nacts++
		if !slices.Contains(p.devices, a.Device) {
			p.devices = append(p.devices, a.Device)
		}
		if p.names.add(a.Name, len(name), len(t.Names)) {
			if err := p.acts.endRowGroup(); err != nil {
				return err
			}
		}
		if err := p.acts.add(row); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if err := p.acts.close(); err != nil {
			return err
		}
		p.acts = nil
		slices.Sort(p.devices)
	}
	return nil
}

// The step kinds of activities outside steps.
var (
	kindAll  = step.WholeTrace.String()
	kindNone = step.Unattributed.String()
)

// launches writes one row per launch call, in the trace's order (by
// process, then correlation id).
func (x *Exporter) launches(path string, t *trace.Trace, parts, partOf []*rankPart, pids []int64) error {
	tabs := map[*rankPart]*table[Launch]{}
	for _, p := range parts {
		tab, err := openTable[Launch](x, p.dir("launches"), p.part)
		if err != nil {
			return err
		}
		tabs[p] = tab
	}
	for i := range t.Launches {
		l := &t.Launches[i]
		row := Launch{PID: pids[l.Proc], Thread: l.Thread, API: t.Names[l.Name],
			StartNS: int64(l.Start), DurNS: l.Dur, Correlation: l.Corr, Input: path}
		if err := tabs[partOf[l.Proc]].add(row); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if err := tabs[p].close(); err != nil {
			return err
		}
	}
	return nil
}

// steps writes one row per step and device of each process, as the steps
// command lists them (its table's order: step, pid, device).
func (x *Exporter) steps(path string, rows []analyze.StepRow, parts, partOf []*rankPart) error {
	tabs := map[*rankPart]*table[Step]{}
	for _, p := range parts {
		tab, err := openTable[Step](x, p.dir("steps"), p.part)
		if err != nil {
			return err
		}
		tabs[p] = tab
	}
	for _, r := range rows {
		s := &r.Step
		row := Step{Device: r.Device, Step: int32(s.Index), Kind: s.Kind.String(), Marker: s.Marker,
			StartNS: int64(r.Start), EndNS: int64(r.Start) + r.SpanNS, SpanNS: r.SpanNS,
			BusyNS: r.BusyNS, KernelNS: r.KernelNS,
			Input: path, PID: r.Rank.PID, MarkerStartNS: int64(s.Start), MarkerEndNS: int64(s.End)}
		if s.Tokens >= 0 {
			tok := s.Tokens
			row.Tokens = &tok
		}
		if err := tabs[partOf[r.Rank.Proc]].add(row); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if err := tabs[p].close(); err != nil {
			return err
		}
	}
	return nil
}

// inputs writes the input's row into each of its rank partitions.
func (x *Exporter) inputs(path, host string, t *trace.Trace, parts []*rankPart) error {
	var anomalies int64
	for _, a := range t.Anomalies {
		anomalies += a.Count
	}
	for _, p := range parts {
		row := Input{Path: path, Format: string(t.Meta.Format), Devices: p.devices,
			TraceqVersion: x.opt.Version, Anomalies: anomalies, Activities: p.nacts}
		if t.Meta.WorldSize >= 0 {
			ws := int32(t.Meta.WorldSize)
			row.WorldSize = &ws
		}
		if t.Truncated != nil {
			row.Truncated = &t.Truncated.Reason
		}
		if host != "" {
			row.Host = &host
		}
		tab, err := openTable[Input](x, p.dir("inputs"), p.part)
		if err != nil {
			return err
		}
		if err := tab.add(row); err != nil {
			return err
		}
		if err := tab.close(); err != nil {
			return err
		}
	}
	return nil
}
