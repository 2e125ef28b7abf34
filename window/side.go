package window

import (
	"github.com/traceq/traceq/step"
	"github.com/traceq/traceq/trace"
)

// namePass is the part of an input's pass that gathers per name: the
// windows' name sums, the durations and the collective kernels. When the
// pass runs in one part it runs on a second goroutine while the pass goes
// on (the pass runs after the parse, when one core would otherwise idle,
// and this part is half of it): the pass hands the activities over in
// batches, in their order, so that it gathers what one goroutine
// gathered. A pass in several parts runs each part's on its goroutine.
type namePass struct {
	tr      *trace.Trace
	nameOf  []NameID
	catOf   []CatID
	classOf func(step int32) step.Class
	skipDur bool
	args    *Args // its own copy: Args.Find keeps its last answer
	durs    durations
	colls   collectives
	cache   nameCache
	last    *win // the window of the last activity taken

	batch []nameItem
	work  chan []nameItem
	free  chan []nameItem
	done  chan struct{}
}

// nameItem is one activity handed over: its index, window, full category
// and step, and whether it is a collective kernel to record.
type nameItem struct {
	w    *win
	i    int32
	full CatID
	step int32
	coll bool
}

// nameBatch is the activities handed over at once: enough that the
// hand-over costs little, few enough to keep the goroutines close.
const nameBatch = 4096

// newNamePass returns a name pass over tr's activities, which takes each
// activity as it is added until start. of is the durations' slot of each
// activity (durations.of), written by the pass; nil with skipDur.
func newNamePass(tr *trace.Trace, nameOf []NameID, catOf []CatID, classOf func(int32) step.Class, skipDur bool, args *Args, of []int32) *namePass {
	p := &namePass{tr: tr, nameOf: nameOf, catOf: catOf, classOf: classOf, skipDur: skipDur}
	if args != nil {
		c := *args
		p.args = &c
	}
	p.durs.of = of
	p.cache.init(len(tr.Names))
	return p
}

// start runs the pass on another goroutine: add hands the activities
// over, wait waits for it to end.
func (p *namePass) start() {
	p.work, p.free, p.done = make(chan []nameItem, 4), make(chan []nameItem, 6), make(chan struct{})
	p.batch = make([]nameItem, 0, nameBatch)
	go func() {
		defer close(p.done)
		for b := range p.work {
			for j := range b {
				p.take(&b[j])
			}
			select {
			case p.free <- b[:0]:
			default:
			}
		}
	}()
}

// add hands an activity over, or takes it at once when the pass was not
// started.
func (p *namePass) add(it nameItem) {
	if p.work == nil {
		p.take(&it)
		return
	}
	p.batch = append(p.batch, it)
	if len(p.batch) == cap(p.batch) {
		p.work <- p.batch
		select {
		case p.batch = <-p.free:
		default:
			p.batch = make([]nameItem, 0, nameBatch)
		}
	}
}

// wait hands the last batch over and waits for the pass to end: the
// windows' names, p.durs and p.colls are then the caller's.
func (p *namePass) wait() {
	if len(p.batch) > 0 {
		p.work <- p.batch
	}
	p.batch = nil
	close(p.work)
	<-p.done
}

// take adds one activity to its window's names, the durations and the
// collectives.
func (p *namePass) take(it *nameItem) {
	a := &p.tr.Activities[it.i]
	w, full := it.w, it.full
	if w != p.last {
		if w.names == nil && p.last != nil {
			// About as many names as the last window's (a step like
			// the one before): grown once.
			w.names = make([]nameAcc, 0, len(p.last.names))
		}
		p.last = w
	}
	nk := nameCat{p.nameOf[a.Name], full}
	var na *nameAcc
	if full == p.catOf[a.Name] {
		na = p.cache.find(w, a.Name, nk)
	} else {
		j := w.findName(nk)
		if j < 0 {
			j = w.addName(nameAcc{key: nk})
		}
		na = &w.names[j]
	}
	na.n++
	na.total += a.Dur
	kernel := a.Kind == trace.KindKernel
	if !p.skipDur {
		ki := boolInt(kernel)
		if na.durs[ki] == 0 {
			na.durs[ki] = 1 + p.durs.slot(durKey{name: nk.name, cat: full, device: a.Device, class: p.classOf(it.step), kernel: kernel})
		}
		slot := na.durs[ki] - 1
		p.durs.of[it.i] = int32(slot)
		p.durs.n[slot]++
	}
	if it.coll {
		p.colls.add(p.tr, a, it.step, full, nk.name, p.args.Find(a))
	}
}

// nameCache finds a window's name sums by the input's trace.NameID, for
// activities of their name's own category (nearly all): rows of one
// entry per name, each row held by one window at a time, the one whose
// seq selects it last added a name there. A window that never lost its
// row finds every name it has there; one that did looks in its index.
// The windows of a stepped input come one after another, those of
// several devices or processes interleaved: a few rows keep each
// window's names by index, as a map lookup per activity did not.
type nameCache struct {
	n     int        // names per row
	rows  int        // a power of 2; 0: every lookup is the index's
	slots []nameSlot // rows × n
	owner []*win     // per row
}

// nameSlot is a row's entry for a name: the window that holds it (its seq
// + 1; 0: none) and the index of its sums in the window's names.
type nameSlot struct {
	win, at int32
}

// nameCacheMax bounds a part's cache (slots; 2 MiB) and nameRowsMax its
// rows; a variable for TestNameRows.
const nameCacheMax = 1 << 18

var nameRowsMax = 16

func (c *nameCache) init(names int) {
	c.n = names
	for c.rows = nameRowsMax; c.rows > 0 && c.rows*names > nameCacheMax; c.rows /= 2 {
	}
	if c.rows > 0 {
		c.slots = make([]nameSlot, c.rows*names)
		c.owner = make([]*win, c.rows)
	}
}

// find returns w's sums of key (trace name id), adding them when new.
func (c *nameCache) find(w *win, id trace.NameID, key nameCat) *nameAcc {
	if c.rows == 0 {
		j := w.findName(key)
		if j < 0 {
			j = w.addName(nameAcc{key: key})
		}
		return &w.names[j]
	}
	row := int(w.seq) & (c.rows - 1)
	s := &c.slots[row*c.n+int(id)]
	if s.win == w.seq+1 {
		return &w.names[s.at]
	}
	if o := c.owner[row]; o != w {
		if o != nil {
			o.lost = true
		}
		c.owner[row] = w
	}
	j := -1
	if w.lost {
		j = w.findName(key)
	}
	if j < 0 {
		j = w.addName(nameAcc{key: key})
	}
	*s = nameSlot{win: w.seq + 1, at: int32(j)}
	return &w.names[j]
}

// findName returns the index of w's sums of key, -1 when it has none.
func (w *win) findName(key nameCat) int {
	if w.index == nil {
		w.index = make(map[nameCat]int32, len(w.names))
		for j := range w.names {
			w.index[w.names[j].key] = int32(j)
		}
	}
	if j, ok := w.index[key]; ok {
		return int(j)
	}
	return -1
}

// addName adds n to w's sums and returns its index.
func (w *win) addName(n nameAcc) int {
	j := len(w.names)
	w.names = append(w.names, n)
	if w.index != nil {
		w.index[n.key] = int32(j)
	}
	return j
}
