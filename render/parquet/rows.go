package parquet

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// winKey names one step on one device of one process.
type winKey struct{ proc, device, step int32 }

// window sums one step on one device as the steps command does: span
// from the first activity start to the last end, busy time (overlaps
// count once), kernel time (summed durations).
type window struct {
	first, last trace.Time
	kernel      int64
	busy        busy
}

// busy is the length of a union of intervals fed in order of start:
// analyze's busy time, which the steps table must equal.
type busy struct {
	total      int64
	start, end trace.Time
	open       bool
}

func (u *busy) add(s, e trace.Time) {
	switch {
	case !u.open:
		u.start, u.end, u.open = s, e, true
	case s > u.end:
		u.total += int64(u.end - u.start)
		u.start, u.end = s, e
	case e > u.end:
		u.end = e
	}
}

func (u *busy) sum() int64 {
	if !u.open {
		return u.total
	}
	return u.total + int64(u.end-u.start)
}

// activities writes one row per activity into its rank's part, in the
// trace's order (by start), and returns the per-step windows.
func (x *Exporter) activities(path string, t *trace.Trace, steps *analyze.Steps, parts, partOf []*rankPart) (map[winKey]*window, error) {
	// Per name: its category and top level, classified once.
	cats := make([]string, len(t.Names))
	tops := make([]string, len(t.Names))
	// Per step: the values the optional columns point to (no allocation
	// per row).
	var index []int32
	var markers []string
	if steps != nil {
		index = make([]int32, len(steps.List))
		markers = make([]string, len(steps.List))
		for i := range steps.List {
			index[i] = int32(i)
			markers[i] = steps.List[i].Marker
		}
	}
	wins := map[winKey]*window{}
	var lastKey winKey
	var last *window
	for i := range t.Activities {
		a := &t.Activities[i]
		name := t.Names[a.Name]
		cat, top := cats[a.Name], tops[a.Name]
		// A memory operation's category is its kind's, whatever its name:
		// only kernels' are kept per name.
		if a.Kind != trace.KindKernel || cat == "" {
			cat = analyze.ActivityCategory(a, name, x.opt.Classifier)
			top = classify.Top(cat)
			if a.Kind == trace.KindKernel {
				cats[a.Name], tops[a.Name] = cat, top
			}
		}
		row := Activity{Input: path, PID: pidOf(t, a.Proc), Device: a.Device, Stream: a.Stream,
			Kind: a.Kind.String(), Name: name, Category: cat, Top: top,
			StartNS: int64(a.Start), DurNS: a.Dur, Correlation: a.Corr, StepKind: analyze.KindAll}
		if steps != nil {
			s := steps.Of[i]
			if s < 0 {
				row.StepKind = analyze.KindNone
			} else {
				row.Step, row.StepMarker = &index[s], &markers[s]
				row.StepKind = steps.List[s].Kind
				k := winKey{a.Proc, a.Device, s}
				w := last
				if w == nil || k != lastKey {
					if w = wins[k]; w == nil {
						w = &window{first: a.Start, last: a.End()}
						wins[k] = w
					}
					last, lastKey = w, k
				}
				w.last = max(w.last, a.End())
				w.kernel += a.Dur
				w.busy.add(a.Start, a.End())
			}
		}
		p := partOf[a.Proc]
		p.nacts++
		if !slices.Contains(p.devices, a.Device) {
			p.devices = append(p.devices, a.Device)
		}
		if err := p.acts.add(row); err != nil {
			return nil, err
		}
	}
	for _, p := range parts {
		if err := p.acts.close(); err != nil {
			return nil, err
		}
		p.acts = nil
		slices.Sort(p.devices)
	}
	return wins, nil
}

// launches writes one row per launch call, in the trace's order (by
// process, then correlation id).
func (x *Exporter) launches(path string, t *trace.Trace, parts, partOf []*rankPart) error {
	tabs := map[*rankPart]*table[Launch]{}
	for _, p := range parts {
		tab, err := openTable[Launch](x, p.dir("launches", x.opt.Run), p.part)
		if err != nil {
			return err
		}
		tabs[p] = tab
	}
	for i := range t.Launches {
		l := &t.Launches[i]
		row := Launch{PID: pidOf(t, l.Proc), Thread: l.Thread, API: t.Names[l.Name],
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

// steps writes one row per step and device of each process, ordered by
// step, pid and device as the steps command lists them.
func (x *Exporter) steps(path string, t *trace.Trace, steps *analyze.Steps, wins map[winKey]*window, parts, partOf []*rankPart) error {
	keys := make([]winKey, 0, len(wins))
	for k := range wins {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b winKey) int {
		if c := cmp.Compare(a.step, b.step); c != 0 {
			return c
		}
		if c := cmp.Compare(pidOf(t, a.proc), pidOf(t, b.proc)); c != 0 {
			return c
		}
		return cmp.Compare(a.device, b.device)
	})
	tabs := map[*rankPart]*table[Step]{}
	for _, p := range parts {
		tab, err := openTable[Step](x, p.dir("steps", x.opt.Run), p.part)
		if err != nil {
			return err
		}
		tabs[p] = tab
	}
	for _, k := range keys {
		w, s := wins[k], &steps.List[k.step]
		row := Step{Device: k.device, Step: k.step, Kind: s.Kind, Marker: s.Marker,
			StartNS: int64(w.first), EndNS: int64(w.last), SpanNS: int64(w.last - w.first),
			BusyNS: w.busy.sum(), KernelNS: w.kernel,
			Tokens: nil, // left for the markers' token counts (issue 14)
			Input:  path, PID: pidOf(t, k.proc), MarkerStartNS: int64(s.Start), MarkerEndNS: int64(s.End)}
		if err := tabs[partOf[k.proc]].add(row); err != nil {
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
func (x *Exporter) inputs(path string, t *trace.Trace, parts []*rankPart) error {
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
		tab, err := openTable[Input](x, p.dir("inputs", x.opt.Run), p.part)
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
