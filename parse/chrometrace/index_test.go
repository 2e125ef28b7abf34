package chrometrace

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// oddIndexTrace is a trace whose events put the keys an index needs in
// unusual places: args before cat, ts after args, ts as a string or
// under an escaped key, flows with string ids, metadata with and
// without ts, untimed events, non-objects, unknown phases, repeated keys,
// and one event malformed inside.
func oddIndexTrace(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"schemaVersion": 1, "traceEvents": [` + "\n")
	b.WriteString(`{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "python"}},` + "\n")
	for i := range n {
		ts := 1000 + i*7
		lines := []string{
			`{"ph": "X", "cat": "python_function", "name": "f` + strconv.Itoa(i) + `", "pid": 1, "tid": 1, "ts": ` + strconv.Itoa(ts) + `, "dur": 3, "args": {"Python id": 1}}`,
			`{"args": {"correlation": ` + strconv.Itoa(5000+i) + `}, "ph": "X", "cat": "python_function", "name": "g", "ts": "` + strconv.Itoa(ts+1) + `.5"}`,
			`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ` + strconv.Itoa(ts+2) + `, "dur": 1, "args": {"correlation": ` + strconv.Itoa(i+1) + `}}`,
			`{"ph": "s", "id": "` + strconv.Itoa(i+1) + `", "pid": 1, "tid": 1, "ts": ` + strconv.Itoa(ts+2) + `, "cat": "ac2g", "name": "ac2g"}`,
			`{"ph": "X", "cat": "user_annotation", "name": "a", "pid": 1, "tid": 1, "t\u0073": ` + strconv.Itoa(ts+3) + `, "ts": 1, "dur": 1}`,
			`{"ph": "i", "cat": "cpu_instant_event", "name": "no ts", "pid": 1, "tid": 1}`,
			`{"ph": "Q", "name": "odd phase", "ts": ` + strconv.Itoa(ts+4) + `}`,
			strconv.Itoa(i),
			`{"cat": "python_function", "name": "no ph", "ts": ` + strconv.Itoa(ts+5) + `}`,
			`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ` + strconv.Itoa(1_000_000+ts) + `, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": ` + strconv.Itoa(i+1) + `}}`,
			`{"ph": "f", "id": ` + strconv.Itoa(i+1) + `, "pid": 0, "tid": 7, "ts": ` + strconv.Itoa(1_000_000+ts) + `, "cat": "ac2g", "name": "ac2g", "bp": "e"}`,
			`{"name": "thread_name", "ph": "M", "ts": 5, "pid": 1, "tid": ` + strconv.Itoa(i) + `, "args": {"name": "t"}}`,
		}
		if i == n/2 {
			// Not JSON inside, which neither the chunks nor the
			// splitter check: the decoder's key scanner stops there.
			lines = append(lines, `{"ph": "X", "cat": "python_function", "name": "odd", "x": 1 2, "ts": `+strconv.Itoa(ts)+`}`)
		}
		b.WriteString(strings.Join(lines, ",\n"))
		if i < n-1 {
			b.WriteString(",\n")
		}
	}
	b.WriteString("\n], \"traceName\": \"odd\", \"distributedInfo\": {\"rank\": 0}}\n")
	return []byte(b.String())
}

// TestIndexAsReader: on every held fixture and on odd input, read in
// chunks of several sizes, the chunk index says of each chunk what a
// skimming Reader reads of its events — their number, the untimed and
// the metadata ones, bounds holding every ts and every correlation and
// flow id, the metadata's text — and the top-level values in order;
// indexing does not change the trace.
func TestIndexAsReader(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(torchDir, "*.json*"))
	more, _ := filepath.Glob(filepath.Join(torchDir, "*", "*.json*"))
	odd := oddIndexTrace(400)
	// The same events as a bare array, the document Chrome also reads.
	array := odd[bytes.IndexByte(odd, '[') : bytes.LastIndexByte(odd, ']')+1]
	inputs := map[string][]byte{"odd": odd, "odd array": array}
	for _, f := range append(files, more...) {
		inputs[f] = readFile(t, f)
	}
	for name, data := range inputs {
		for _, opt := range []Options{{Workers: 1, BlockSize: 4 << 10}, {Workers: 3, BlockSize: 97}, {Workers: 2}} {
			ref, rerr := Parse(bytes.NewReader(data), opt)
			var idx *Index
			o := opt
			o.Index = func(x *Index) { idx = x }
			before := respeculated.Load()
			got, err := Parse(bytes.NewReader(data), o)
			if (err == nil) != (rerr == nil) || !reflect.DeepEqual(ref, got) {
				t.Fatalf("%s (%+v): indexing changed the trace (%v, %v)", name, opt, err, rerr)
			}
			if respeculated.Load() != before {
				// Every input here takes the fast path (TestChunksAsSplitter
				// says so of the fixtures).
				t.Fatalf("%s (%+v): the chunks gave up (index %v)", name, opt, idx != nil)
			}
			if idx == nil {
				t.Fatalf("%s (%+v): no index", name, opt)
			}
			checkIndex(t, fmt.Sprintf("%s (%+v)", name, opt), data, idx)
			// Chunks of 2 MB are summarised in parts of partBytes.
			if end := idx.Chunks[len(idx.Chunks)-1].End; opt.BlockSize == 0 && end > 8*partBytes && int64(len(idx.Chunks)) < end/partBytes/2 {
				t.Errorf("%s: %d parts of %d bytes", name, len(idx.Chunks), end)
			}
		}
	}
}

// checkIndex compares idx with what a skimming Reader reads of data.
func checkIndex(t *testing.T, name string, data []byte, idx *Index) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.Skim()
	type tally struct {
		events, untimed, meta int64
		meta_                 [][]byte
	}
	got := make([]tally, len(idx.Chunks))
	var tops []TopLevel
	c := 0
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ev.Kind == KindTopLevel {
			tops = append(tops, TopLevel{ev.Key, slices.Clone(ev.Raw)})
			continue
		}
		for c < len(idx.Chunks) && (idx.Chunks[c].Events == 0 || ev.Offset >= idx.Chunks[c].End) {
			c++
		}
		if c == len(idx.Chunks) || ev.Offset < idx.Chunks[c].Start || ev.Offset+int64(len(ev.Raw)) > idx.Chunks[c].End {
			t.Fatalf("%s: event %d at byte %d is in no chunk", name, ev.Index, ev.Offset)
		}
		ch, g := &idx.Chunks[c], &got[c]
		g.events++
		switch {
		case ev.Ph == "M":
			g.meta++
			g.meta_ = append(g.meta_, slices.Clone(ev.Raw))
		case !ch.Exact:
			// A chunk read whatever its bounds: they need not hold.
		case !ev.HasTS:
			g.untimed++
		default:
			if !ch.Timed || ev.TS < ch.MinTS || ev.TS > ch.MaxTS {
				t.Errorf("%s: event %d's ts %d outside its chunk's [%d, %d]", name, ev.Index, ev.TS, ch.MinTS, ch.MaxTS)
			}
			ids := []int64{ev.Corr}
			if flowPhase(ev.Ph) && LaunchFlow(ev.Cat) {
				if id, err := strconv.ParseInt(strings.Trim(ev.ID, `"`), 10, 64); err == nil {
					ids = append(ids, id)
				}
			}
			for _, id := range ids {
				if id != 0 && (!ch.Corr || id < ch.MinCorr || id > ch.MaxCorr) {
					t.Errorf("%s: event %d's id %d outside its chunk's [%d, %d]", name, ev.Index, id, ch.MinCorr, ch.MaxCorr)
				}
			}
		}
	}
	var events int64
	var inexact []int
	for i, ch := range idx.Chunks {
		g := got[i]
		events += ch.Events
		if !ch.Exact {
			inexact = append(inexact, i)
			g.untimed = ch.Untimed
		}
		if g.events != ch.Events || g.untimed != ch.Untimed || g.meta != ch.Meta {
			t.Errorf("%s: chunk %d: %d events, %d untimed, %d metadata; the index says %d, %d, %d", name, i,
				g.events, g.untimed, g.meta, ch.Events, ch.Untimed, ch.Meta)
		}
		if ch.MetaStored && !bytes.Equal(ch.MetaRaw, bytes.Join(g.meta_, []byte(","))) {
			t.Errorf("%s: chunk %d: metadata %q, want %q", name, i, ch.MetaRaw, bytes.Join(g.meta_, []byte(",")))
		}
		if ch.Meta > 0 && !ch.MetaStored {
			t.Errorf("%s: chunk %d: %d metadata events not held", name, i, ch.Meta)
		}
	}
	if events == 0 {
		t.Fatalf("%s: an index of no events", name)
	}
	// Only the malformed event's part is not exact.
	if want := strings.HasPrefix(name, "odd"); len(inexact) != map[bool]int{true: 1}[want] {
		t.Errorf("%s: parts %v not exact", name, inexact)
	}
	if !reflect.DeepEqual(tops, idx.Tops) {
		t.Errorf("%s: top-level values %d, the index has %d", name, len(tops), len(idx.Tops))
	}
}

// TestIndexNotGiven: input the chunks give up on (a guess cut inside a
// string, a cut file) or that is not a file gets no index.
func TestIndexNotGiven(t *testing.T) {
	good := oddIndexTrace(50)
	name := strings.Repeat(`x}, {y`, 20<<10)
	guess := bytes.Replace(good, []byte(`"name": "g"`), []byte(`"name": "`+name+`"`), 1)
	for what, data := range map[string][]byte{"a wrong guess": guess, "a cut file": good[:len(good)/2]} {
		called := false
		if _, err := Parse(bytes.NewReader(data), Options{Workers: 2, BlockSize: 4 << 10, Index: func(*Index) { called = true }}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if called {
			t.Errorf("%s: an index", what)
		}
	}
	called := false
	if _, err := Parse(io.MultiReader(bytes.NewReader(good)), Options{Index: func(*Index) { called = true }}); err != nil || called {
		t.Errorf("a stream: index %v (%v)", called, err)
	}
}

// TestSections: ranges of plain and gzip JSON, in order, sought or
// skipped; a range past the end is ErrSections.
func TestSections(t *testing.T) {
	data := oddIndexTrace(200)
	gzd := gz(data)
	for what, in := range map[string][]byte{"plain": data, "gzip": gzd} {
		s, err := NewSections(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		for _, rg := range [][2]int64{{0, 10}, {10, 5}, {1000, 300}, {int64(len(data)) - 40, 40}} {
			r, err := s.Range(rg[0], rg[1])
			if err != nil {
				t.Fatalf("%s %v: %v", what, rg, err)
			}
			b, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(b, data[rg[0]:rg[0]+rg[1]]) {
				t.Fatalf("%s %v: %q (%v)", what, rg, b, err)
			}
		}
		if _, err := s.Range(5, 1); err != ErrSections {
			t.Errorf("%s: a range backwards: %v", what, err)
		}
		s.Close()
		s, _ = NewSections(bytes.NewReader(in))
		r, err := s.Range(int64(len(data))-5, 10)
		if err == nil {
			_, err = io.ReadAll(r)
		}
		if err != ErrSections {
			t.Errorf("%s: a range past the end: %v", what, err)
		}
		s.Close()
	}
}
