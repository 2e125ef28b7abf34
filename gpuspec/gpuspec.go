// Package gpuspec is the table of what each GPU could do at most: dense
// peak throughput per data type, memory bandwidth, SM count and the
// default interconnect, each row with its source. It is data, like
// classify's rules: the defaults are the file gpus.txt in this package,
// embedded in the binary; a user file extends or replaces them (Load).
//
// The figures are a roofline's roofs (docs/efficiency.md#the-gpu-table);
// Match finds the row of a device from what a trace says of it (its name,
// SM count and memory), Lookup the row a user names.
package gpuspec

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/traceq/traceq/trace"
)

//go:embed gpus.txt
var defaultTable string

const defaultSource = "gpus.txt"

// DType is a data type whose peak throughput the table gives.
type DType uint8

const (
	FP64 DType = iota
	FP32
	TF32
	BF16
	FP16
	FP8
	FP6
	FP4
	INT8
	INT4
	numDTypes
)

var dtypeNames = [numDTypes]string{"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4"}

func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// DTypes lists the data types in table order.
func DTypes() []DType {
	ds := make([]DType, numDTypes)
	for i := range ds {
		ds[i] = DType(i)
	}
	return ds
}

// ParseDType reads a data type's name as the table writes it ("bf16").
func ParseDType(s string) (DType, bool) {
	i := slices.Index(dtypeNames[:], strings.ToLower(s))
	return DType(i), i >= 0
}

// Mark says how certain a figure is.
type Mark uint8

const (
	// Unconfirmed: the commonly quoted vendor figure, not seen in a
	// primary source or a verbatim copy of one.
	Unconfirmed Mark = 1 << iota
	// Derived: arithmetic on primary figures (units × rate × clock).
	Derived
	// Halved: the vendor gives only the figure with 2:4 sparsity.
	Halved
)

var markNames = []struct {
	m    Mark
	name string
}{{Halved, "halved"}, {Derived, "derived"}, {Unconfirmed, "unconfirmed"}}

// String lists the marks as the table writes them: "halved unconfirmed".
func (m Mark) String() string {
	var s []string
	for _, n := range markNames {
		if m&n.m != 0 {
			s = append(s, n.name)
		}
	}
	return strings.Join(s, " ")
}

// Figure is one number of the table, as written and as a rate.
type Figure struct {
	// Text is the figure as the file writes it ("989.5"): TFLOP/s for a
	// peak, TB/s for memory.
	Text string
	// PerSecond is the exact rate: FLOP/s for a peak, bytes/s for memory
	// (989.5 TFLOP/s is 989_500_000_000_000). 0 when absent.
	PerSecond int64
	Marks     Mark
}

// Known reports whether the row gives the figure.
func (f Figure) Known() bool { return f.PerSecond > 0 }

// Tera returns the figure in units of 10^12 per second (TFLOP/s, TB/s).
func (f Figure) Tera() float64 { return float64(f.PerSecond) / 1e12 }

// Match is one way a trace's device is recognised as a row.
type Match struct {
	// Name is compared case-insensitively, blanks collapsed; "" matches a
	// device without a name.
	Name string
	// SMs and MemoryGiB, when > 0, must also agree: SMs exactly, memory
	// within 3 %.
	SMs       int
	MemoryGiB int
}

// GPU is one row of the table.
type GPU struct {
	// Name is the row's name ("B200", "H100 SXM"), which --gpu takes.
	Name    string
	Matches []Match
	SMs     int
	SMsMark Mark
	// Memory is the memory bandwidth, bytes/s.
	Memory Figure
	// Peak is the dense peak per data type, FLOP/s (TOP/s for integers).
	Peak [numDTypes]Figure
	// Link is the default interconnect for collectives: a link name of
	// `traceq collectives --link` or GB/s per direction; "" when the
	// row gives none. LinkMark qualifies it.
	Link     string
	LinkMark Mark
	// Sources say where the figures come from.
	Sources []string
	// Origin is "file:line" of the row's "gpu" line.
	Origin string
	line   int
}

// PeakFLOPS returns the dense peak for d in FLOP/s, and whether the row
// gives one.
func (g *GPU) PeakFLOPS(d DType) (int64, bool) {
	if d >= numDTypes {
		return 0, false
	}
	return g.Peak[d].PerSecond, g.Peak[d].Known()
}

// Source joins the row's sources in one line.
func (g *GPU) Source() string { return strings.Join(g.Sources, "; ") }

// Table is a parsed GPU table. It is immutable and safe for concurrent use.
type Table struct {
	gpus []GPU
}

// GPUs returns the rows in file order (a user file's rows first).
func (t *Table) GPUs() []GPU { return slices.Clone(t.gpus) }

var defaultOnce = sync.OnceValue(func() *Table {
	gpus, err := Parse(strings.NewReader(defaultTable), defaultSource, nil)
	if err != nil {
		// The embedded file is tested; this is a build defect.
		panic("gpuspec: embedded " + err.Error())
	}
	return &Table{gpus: gpus}
})

// Default returns the table of the embedded gpus.txt, shared by every call.
func Default() *Table { return defaultOnce() }

// Load reads the GPU table file at path: its rows are tried before the
// default rows (a row of the same name replaces the default one), or
// replace them all when the file holds the line "!replace".
func Load(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gpus, err := Parse(f, path, Default().gpus)
	if err != nil {
		return nil, err
	}
	return &Table{gpus: gpus}, nil
}

// SyntaxError is a line of a table file that cannot be read.
type SyntaxError struct {
	Source string // the file
	Line   int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg) }

// Parse reads a table file and returns its rows followed by those of base
// whose names it does not redefine (or only its own rows when it holds the
// line "!replace"). source names the file in errors and in GPU.Origin.
func Parse(r io.Reader, source string, base []GPU) ([]GPU, error) {
	var own []GPU
	replace := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	bad := func(format string, args ...any) error {
		return &SyntaxError{Source: source, Line: n, Msg: fmt.Sprintf(format, args...)}
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line == "!replace" {
			replace = true
			continue
		}
		key, rest := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
			key, rest = line[:i], strings.TrimSpace(line[i:])
		}
		key = strings.ToLower(key)
		if key == "gpu" {
			if rest == "" {
				return nil, bad("gpu without a name")
			}
			name := strings.Join(strings.Fields(rest), " ")
			for _, g := range own {
				if normalize(g.Name) == normalize(name) {
					return nil, bad("gpu %q defined twice (first at %s)", name, g.Origin)
				}
			}
			own = append(own, GPU{Name: name, Origin: fmt.Sprintf("%s:%d", source, n), line: n})
			continue
		}
		if len(own) == 0 {
			return nil, bad("%q before the first \"gpu NAME\" line", key)
		}
		g := &own[len(own)-1]
		if err := g.set(key, rest); err != nil {
			return nil, bad("%s", err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &SyntaxError{Source: source, Line: n + 1, Msg: "line longer than 1 MiB"}
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	for i := range own {
		if err := own[i].check(); err != nil {
			return nil, &SyntaxError{Source: source, Line: own[i].line, Msg: fmt.Sprintf("gpu %q: %v", own[i].Name, err)}
		}
	}
	if replace {
		return own, nil
	}
	out := slices.Clip(own)
	for _, b := range base {
		if !slices.ContainsFunc(own, func(g GPU) bool { return normalize(g.Name) == normalize(b.Name) }) {
			out = append(out, b)
		}
	}
	return out, nil
}

// set reads one field line of the row.
func (g *GPU) set(key, rest string) error {
	switch key {
	case "match":
		m, err := parseMatch(rest)
		if err != nil {
			return err
		}
		g.Matches = append(g.Matches, m)
		return nil
	case "source":
		if rest == "" {
			return errors.New("empty source")
		}
		g.Sources = append(g.Sources, rest)
		return nil
	case "sms":
		f := strings.Fields(rest)
		if len(f) == 0 {
			return errors.New("sms without a value")
		}
		v, err := strconv.Atoi(f[0])
		if err != nil || v <= 0 {
			return fmt.Errorf("sms %q: want a positive integer", f[0])
		}
		marks, err := parseMarks(f[1:])
		if err != nil {
			return err
		}
		g.SMs, g.SMsMark = v, marks
		return nil
	case "link":
		f := strings.Fields(rest)
		if len(f) == 0 {
			return errors.New("link without a value")
		}
		marks, err := parseMarks(f[1:])
		if err != nil {
			return err
		}
		g.Link, g.LinkMark = f[0], marks
		return nil
	case "memory":
		fig, err := parseFigure(rest)
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		g.Memory = fig
		return nil
	}
	if d, ok := ParseDType(key); ok {
		fig, err := parseFigure(rest)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		g.Peak[d] = fig
		return nil
	}
	return fmt.Errorf("unknown field %q (want match, sms, memory, link, source or a data type: %s)", key, strings.Join(dtypeNames[:], ", "))
}

// check reports what a complete row lacks.
func (g *GPU) check() error {
	if !g.Memory.Known() {
		return errors.New("no memory bandwidth")
	}
	if g.SMs == 0 {
		return errors.New("no sms")
	}
	if len(g.Sources) == 0 {
		return errors.New("no source: every figure names where it comes from")
	}
	return nil
}

func parseMatch(s string) (Match, error) {
	if !strings.HasPrefix(s, `"`) {
		return Match{}, fmt.Errorf("match %s: want a quoted name", s)
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return Match{}, fmt.Errorf("match %s: unterminated quote", s)
	}
	m := Match{Name: strings.Join(strings.Fields(s[1:1+end]), " ")}
	for _, f := range strings.Fields(s[2+end:]) {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n <= 0 {
			return Match{}, fmt.Errorf("match condition %q: want sms=N or memory=GiB", f)
		}
		switch k {
		case "sms":
			m.SMs = n
		case "memory":
			m.MemoryGiB = n
		default:
			return Match{}, fmt.Errorf("match condition %q: want sms=N or memory=GiB", f)
		}
	}
	if m.Name == "" && (m.SMs == 0 || m.MemoryGiB == 0) {
		return Match{}, errors.New(`match "": a device without a name needs sms= and memory=`)
	}
	return m, nil
}

func parseMarks(words []string) (Mark, error) {
	var m Mark
	for _, w := range words {
		i := slices.IndexFunc(markNames, func(n struct {
			m    Mark
			name string
		}) bool {
			return n.name == strings.ToLower(w)
		})
		if i < 0 {
			return 0, fmt.Errorf("unknown mark %q (want unconfirmed, derived or halved)", w)
		}
		m |= markNames[i].m
	}
	return m, nil
}

// parseFigure reads "989.5 halved": a decimal number of 10^12 per second
// and its marks.
func parseFigure(s string) (Figure, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Figure{}, errors.New("no value")
	}
	v, err := parseTera(f[0])
	if err != nil {
		return Figure{}, err
	}
	marks, err := parseMarks(f[1:])
	if err != nil {
		return Figure{}, err
	}
	return Figure{Text: f[0], PerSecond: v, Marks: marks}, nil
}

// parseTera reads a positive decimal number of units of 10^12 exactly, as
// an integer (no float rounding: 0.3 TB/s is 300_000_000_000 bytes/s).
func parseTera(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 12 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q: want a positive decimal number", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/1_000_000_000_000-1 {
		return 0, fmt.Errorf("%q: out of range", s)
	}
	v := w * 1e12
	if frac != "" {
		f, _ := strconv.ParseInt(frac+strings.Repeat("0", 12-len(frac)), 10, 64)
		v += f
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q: want a positive decimal number", s)
	}
	return v, nil
}

// normalize folds a name for comparison: lower case, blanks collapsed.
func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// squash folds a name the user typed: lower case, letters and digits only,
// so "h100-sxm", "H100 SXM" and "h100sxm" are one name.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Match returns the row of a device as a trace describes it: a match line
// with the device's name (and, where the line says so, its SM count and
// memory). The first matching row wins. A device the table does not know
// returns false: the caller says so and asks for --gpu.
func (t *Table) Match(d trace.Device) (*GPU, bool) {
	name := normalize(d.Name)
	gib := float64(d.MemoryBytes) / (1 << 30)
	for i := range t.gpus {
		for _, m := range t.gpus[i].Matches {
			if normalize(m.Name) != name {
				continue
			}
			if m.SMs > 0 && m.SMs != d.SMs {
				continue
			}
			if m.MemoryGiB > 0 && math.Abs(gib-float64(m.MemoryGiB)) > 0.03*float64(m.MemoryGiB) {
				continue
			}
			return &t.gpus[i], true
		}
	}
	return nil, false
}

// UnknownGPUError is a --gpu name the table does not hold.
type UnknownGPUError struct{ Name string }

func (e *UnknownGPUError) Error() string {
	return fmt.Sprintf("unknown GPU %q ('traceq gpus' lists the known ones)", e.Name)
}

// Lookup returns the row a user names: a row name or one of its device
// names, in any case, with or without blanks and dashes ("h100-sxm",
// "NVIDIA B200").
func (t *Table) Lookup(name string) (*GPU, error) {
	s := squash(name)
	if s != "" {
		for i := range t.gpus {
			if squash(t.gpus[i].Name) == s {
				return &t.gpus[i], nil
			}
		}
		for i := range t.gpus {
			for _, m := range t.gpus[i].Matches {
				if m.Name != "" && squash(m.Name) == s {
					return &t.gpus[i], nil
				}
			}
		}
	}
	return nil, &UnknownGPUError{Name: name}
}

// Write writes the table in the file format Parse reads, one row after
// another, so that `traceq gpus --spec` can be edited and given back with
// --gpu-spec.
func (t *Table) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# traceq GPU table (docs/efficiency.md#the-gpu-table); give an edited copy with --gpu-spec FILE")
	fig := func(key string, f Figure) {
		if !f.Known() {
			return
		}
		fmt.Fprintf(bw, "%-7s %s", key, f.Text)
		if f.Marks != 0 {
			fmt.Fprintf(bw, " %s", f.Marks)
		}
		fmt.Fprintln(bw)
	}
	for _, g := range t.gpus {
		fmt.Fprintf(bw, "\n# from %s\ngpu %s\n", g.Origin, g.Name)
		for _, m := range g.Matches {
			fmt.Fprintf(bw, "match   \"%s\"", m.Name)
			if m.SMs > 0 {
				fmt.Fprintf(bw, " sms=%d", m.SMs)
			}
			if m.MemoryGiB > 0 {
				fmt.Fprintf(bw, " memory=%d", m.MemoryGiB)
			}
			fmt.Fprintln(bw)
		}
		fmt.Fprintf(bw, "sms     %d", g.SMs)
		if g.SMsMark != 0 {
			fmt.Fprintf(bw, " %s", g.SMsMark)
		}
		fmt.Fprintln(bw)
		fig("memory", g.Memory)
		for d := range numDTypes {
			fig(d.String(), g.Peak[d])
		}
		if g.Link != "" {
			fmt.Fprintf(bw, "link    %s", g.Link)
			if g.LinkMark != 0 {
				fmt.Fprintf(bw, " %s", g.LinkMark)
			}
			fmt.Fprintln(bw)
		}
		for _, s := range g.Sources {
			fmt.Fprintf(bw, "source  %s\n", s)
		}
	}
	return bw.Flush()
}
