package analyze

import (
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
