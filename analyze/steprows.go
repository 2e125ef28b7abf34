package analyze

import (
	"cmp"
	"slices"
)

// stepRows lists the per-step windows (one per step and device), in
// input, process, step, device order.
func stepRows(inputs []Input, wins []*window, cz *categorizer) []StepRow {
	var rows []StepRow
	for _, w := range wins {
		in := inputs[w.input]
		if in.Steps == nil || w.step < 0 {
			continue
		}
		row := StepRow{
			Input: w.input, Path: in.Path, Step: in.Steps.List[w.step],
			PID: procPID(in.Trace, w.proc), Device: w.device,
			Start: w.first, SpanNS: int64(w.last - w.first), BusyNS: w.busy.sum(), KernelNS: w.kernel,
			ByCat: map[string]int64{},
		}
		for ci, ca := range w.cats {
			row.ByCat[cz.cats[ci]] += ca.kernel
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b StepRow) int {
		if c := cmp.Compare(a.Input, b.Input); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Step.Index, b.Step.Index); c != 0 {
			return c
		}
		if c := cmp.Compare(a.PID, b.PID); c != 0 {
			return c
		}
		return cmp.Compare(a.Device, b.Device)
	})
	return rows
}
