package render

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/traceq/traceq/labels"
	"github.com/traceq/traceq/stats"
)

// Formats lists the table formats.
var Formats = []string{"text", "markdown", "csv", "json"}

// FormatError reports an unknown output format.
type FormatError struct {
	Format string
	Want   []string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("unknown format %q (want %s)", e.Format, strings.Join(e.Want, ", "))
}

// CheckFormat reports an error for an unknown format name.
func CheckFormat(f string) error {
	for _, x := range Formats {
		if f == x {
			return nil
		}
	}
	return &FormatError{f, Formats}
}

// MS formats nanoseconds as milliseconds with three decimals, rounded half
// up from the integer without going through a float: every millisecond
// figure traceq prints (a time that rounds to zero prints unsigned).
func MS(ns int64) string {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	us := (ns + 500) / 1000
	s := strconv.FormatInt(us/1000, 10) + "." + fmt.Sprintf("%03d", us%1000)
	if neg && us != 0 {
		s = "-" + s
	}
	return s
}

// MSf formats a float nanosecond figure (a mean, a median) like MS.
func MSf(ns float64) string { return strconv.FormatFloat(ns/1e6, 'f', 3, 64) }

// Pct formats a fraction as a percentage with one decimal.
func Pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

func ratio(a, b int64) float64 { return stats.Ratio(a, b) }

// Printable returns s with what a terminal or a markdown viewer would
// act on made visible: control characters (C0, DEL, C1) are written as Go
// escapes (\x1b, \n, \u0085) and invalid UTF-8 bytes as \xNN. Names come
// from the trace, which anyone may have written.
func Printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&sb, `\x%02x`, s[i])
		case isControl(r):
			q := strconv.QuoteRune(r)
			sb.WriteString(q[1 : len(q)-1])
		default:
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			if c < 0x80 || !utf8.ValidString(s[i:]) {
				return false
			}
			for _, r := range s[i:] {
				if isControl(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// csvText neutralises a text cell that a spreadsheet would run as a
// formula: one starting with =, +, -, @, a tab or a carriage return gets a
// leading apostrophe (OWASP's advice). Only name, path and marker cells go
// through it; numbers are written as they are.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Table is a list of rows rendered as aligned text or a markdown table.
// Every cell is made Printable.
type Table struct {
	Head  []string
	Right []bool // right-align column
	rows  [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Text writes t as aligned columns, each line indented.
func (t *Table) Text(sb *strings.Builder, indent string) {
	w := make([]int, len(t.Head))
	cells := func(r []string) []string {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = Printable(c)
		}
		return out
	}
	head := cells(t.Head)
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = cells(r)
	}
	for i, h := range head {
		w[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > w[i] {
				w[i] = n
			}
		}
	}
	line := func(cells []string) {
		var l strings.Builder
		l.WriteString(indent)
		for i, c := range cells {
			pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
			if i > 0 {
				l.WriteString("  ")
			}
			if t.Right[i] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		sb.WriteString(strings.TrimRight(l.String(), " "))
		sb.WriteByte('\n')
	}
	line(head)
	for _, r := range rows {
		line(r)
	}
}

// MarkdownCell escapes s for a markdown table cell: Printable, then the
// pipe and the angle brackets (kernel templates would read as HTML).
func MarkdownCell(s string) string {
	s = Printable(s)
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "<", "&lt;")
	return strings.ReplaceAll(s, ">", "&gt;")
}

// Markdown writes t as a markdown table.
func (t *Table) Markdown(sb *strings.Builder) {
	sb.WriteString("|")
	for _, h := range t.Head {
		sb.WriteString(" " + MarkdownCell(h) + " |")
	}
	sb.WriteString("\n|")
	for i := range t.Head {
		if t.Right[i] {
			sb.WriteString("---:|")
		} else {
			sb.WriteString("---|")
		}
	}
	sb.WriteByte('\n')
	for _, r := range t.rows {
		sb.WriteString("|")
		for _, c := range r {
			sb.WriteString(" " + MarkdownCell(c) + " |")
		}
		sb.WriteByte('\n')
	}
}

// Write renders t as markdown or indented text.
func (t *Table) Write(sb *strings.Builder, md bool) {
	if md {
		t.Markdown(sb)
	} else {
		t.Text(sb, "  ")
	}
}

// Code writes s as markdown inline code: Printable, in as many backticks
// as it needs.
func Code(s string) string {
	s = Printable(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// Labels names the kernels of a set of names for tables and charts: each
// name's label (labels.Of over all of them, so the same whatever --top
// keeps); a name not in the set is labelled by its short form.
type Labels map[string]string

// LabelsOf labels names (every kernel name of the inputs: see
// window.Table.Names); nil for none.
func LabelsOf(names []string) Labels {
	if len(names) == 0 {
		return nil
	}
	return labels.Of(names, labels.Width)
}

// Of returns the label of name, clipped to width runes (0: no limit).
func (l Labels) Of(name string, width int) string {
	if s, ok := l[name]; ok {
		return labels.Clip(s, width)
	}
	return labels.Clip(labels.Clip(name, labels.Width), width)
}

// List returns the names to show for rows of kernels: each row's label
// clipped to width. Without labels (nil: rows made by hand) the rows are
// labelled among themselves by the same rule.
func (l Labels) List(names []string, width int) []string {
	if l == nil {
		return labels.Ordered(names, width)
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = l.Of(n, width)
	}
	return out
}

// SignedMicros formats ns as µs with a sign and three decimals, exactly:
// "+7.500", "-0.250", "0.000".
func SignedMicros(ns int64) string {
	sign := "+"
	switch {
	case ns == 0:
		sign = ""
	case ns < 0:
		sign = "-"
	}
	u := uint64(ns)
	if ns < 0 {
		u = uint64(-(ns + 1)) + 1
	}
	return sign + micros(u)
}

// Micros formats a non-negative ns as µs with three decimals, exactly:
// "7.500".
func Micros(ns int64) string { return micros(uint64(max(ns, 0))) }

func micros(u uint64) string {
	return strconv.FormatUint(u/1000, 10) + "." + fmt.Sprintf("%03d", u%1000)
}
