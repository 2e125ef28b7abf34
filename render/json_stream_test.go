package render

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
)

// streamDoc has what the documents have: omitempty fields, nil and
// empty slices, nested structs, pointers, maps, and strings that
// encoding/json would escape as HTML.
type streamDoc struct {
	Inputs  []jsonInput        `json:"inputs"`
	Nil     []int              `json:"nil"`
	Empty   []int              `json:"empty"`
	Omitted []int              `json:"omitted,omitempty"`
	Zero    int                `json:"zero,omitempty"`
	Ptr     *int               `json:"ptr"`
	Map     map[string]float64 `json:"map"`
	Nested  struct {
		A []string `json:"a"`
	} `json:"nested"`
	Grid    [3]int `json:"grid"`
	Plain   string `json:"plain"`
	private int
	Skipped int      `json:"-"`
	Untag   []string // its Go name
}

// TestWriteJSONAsEncoder: writeJSON gives encoding/json's Encoder's bytes
// (two-space indent, no HTML escaping) for documents of every shape it
// streams, and for values it writes whole.
func TestWriteJSONAsEncoder(t *testing.T) {
	rank := 3
	full := streamDoc{Inputs: []jsonInput{{Path: "a<b>&c.json", Run: "r", Rank: &rank}, {Path: "b", Host: "h"}},
		Empty: []int{}, Zero: 0, Ptr: &rank, Map: map[string]float64{"b": 1.5, "a": 2}, Grid: [3]int{1, 2, 3}, Plain: "x\ny", Untag: []string{"u"}}
	full.Nested.A = []string{"p", "q"}
	for name, v := range map[string]any{
		"full":      full,
		"pointer":   &full,
		"zero":      streamDoc{},
		"nil":       (*streamDoc)(nil),
		"no fields": struct{}{},
		"slice":     []int{1, 2},
		"number":    4.5,
		"kernels":   jsonKernelsDoc{Inputs: []jsonInput{{Path: "p"}}},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeJSON(&got, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: writeJSON gave\n%s\nencoding/json gives\n%s", name, got.String(), want.String())
		}
	}
}

// heapWriter records the most live heap seen at any write, after a
// collection: what a writer holds while it writes, deterministically
// (live bytes, not the process's sampled memory).
type heapWriter struct{ max uint64 }

func (h *heapWriter) Write(p []byte) (int, error) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.max = max(h.max, m.HeapAlloc)
	return len(p), nil
}

// TestWriteJSONStreams: a document of 2,000 rows of 8 KB names (16 MB of
// JSON) is written holding about a row and the write buffer beyond the
// document itself, where encoding/json's Encoder holds the whole output
// twice (compact and indented) before its one write (issue 19 item 15: a
// breakdown of 100k distinct 2 KB names peaked at 1 GB in --format json).
func TestWriteJSONStreams(t *testing.T) {
	name := strings.Repeat("k", 8<<10)
	doc := jsonKernelsDoc{Kernels: make([]jsonKernel, 2000)}
	for i := range doc.Kernels {
		doc.Kernels[i].Name = name[:len(name)-i%7] // shared bytes: the document itself stays small
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	var h heapWriter
	if err := writeJSON(&h, doc); err != nil {
		t.Fatal(err)
	}
	if held := int64(h.max) - int64(base); held > 2<<20 {
		t.Errorf("writeJSON held %d bytes beyond the document while writing 16 MB of JSON; want ≤ 2 MiB", held)
	}
	// The Encoder, for contrast: the same document whole.
	var e heapWriter
	enc := json.NewEncoder(io.MultiWriter(&e))
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if held := int64(e.max) - int64(base); held < 16<<20 {
		t.Errorf("encoding/json held only %d bytes: the test no longer tells streaming from whole", held)
	}
}
