package analyze

import (
	"cmp"
	"slices"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/trace"
)

// ActivityCategory is the category of an activity: memcpy and memset
// activities by their kind, whatever their name; kernels by name.
func ActivityCategory(a *trace.Activity, name string, cl *classify.Classifier) classify.Category {
	switch a.Kind {
	case trace.KindMemcpy:
		return classify.MemcpyCategory
	case trace.KindMemset:
		return classify.MemsetCategory
	}
	return cl.Classify(name)
}

// categoryList finishes a group's categories (a group, or a run's kind in
// a summary): each one's shares of the kernel time and of the span, its
// time per window, largest kernel time first (ties in category order).
func categoryList[K comparable](cats map[K]*CategoryStat, kernel, span int64, windows int) []CategoryStat {
	out := make([]CategoryStat, 0, len(cats))
	for _, cs := range cats {
		cs.Share = Ratio(cs.KernelNS, kernel)
		cs.StepShare = Ratio(cs.BusyNS, span)
		cs.KernelPerStepNS = PerStep(cs.KernelNS, windows)
		out = append(out, *cs)
	}
	slices.SortFunc(out, func(a, b CategoryStat) int {
		if c := cmp.Compare(b.KernelNS, a.KernelNS); c != 0 {
			return c
		}
		return classify.Compare(a.Category, b.Category)
	})
	return out
}

// catID indexes a catTable: analyses group by this small integer and turn
// it into a classify.Category only in their results.
type catID int32

// catTable numbers the categories met in one analysis.
type catTable struct {
	ids  map[classify.Category]catID
	cats []classify.Category
}

func newCatTable() *catTable { return &catTable{ids: map[classify.Category]catID{}} }

func (c *catTable) id(cat classify.Category) catID {
	if i, ok := c.ids[cat]; ok {
		return i
	}
	i := catID(len(c.cats))
	c.ids[cat] = i
	c.cats = append(c.cats, cat)
	return i
}

// byName categorises every name of t's activities once and returns, per
// NameID, its category id (-1 for names no activity has).
func (c *catTable) byName(t *trace.Trace, categorize func(*trace.Activity, string) classify.Category) []catID {
	out := make([]catID, len(t.Names))
	for i := range out {
		out[i] = -1
	}
	for i := range t.Activities {
		a := &t.Activities[i]
		if out[a.Name] < 0 {
			out[a.Name] = c.id(categorize(a, t.Names[a.Name]))
		}
	}
	return out
}
