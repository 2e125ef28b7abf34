package render

import (
	"fmt"

	"github.com/traceq/traceq/analyze"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Formats lists the table formats.
var Formats = []string{"text", "markdown", "csv", "json"}

// CheckFormat reports an error for an unknown format name.
func CheckFormat(f string) error {
	for _, x := range Formats {
		if f == x {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q (want %s)", f, strings.Join(Formats, ", "))
}

// MS formats nanoseconds as milliseconds with three decimals.
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

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// table is a list of rows rendered as aligned text or a markdown table.
type table struct {
	head  []string
	right []bool // right-align column
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) text(sb *strings.Builder, indent string) {
	w := make([]int, len(t.head))
	for i, h := range t.head {
		w[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > w[i] {
				w[i] = n
			}
		}
	}
	line := func(cells []string) {
		sb.WriteString(indent)
		for i, c := range cells {
			pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
			if i > 0 {
				sb.WriteString("  ")
			}
			if t.right[i] {
				sb.WriteString(pad + c)
			} else if i < len(cells)-1 {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(c)
			}
		}
		sb.WriteByte('\n')
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
}

func (t *table) markdown(sb *strings.Builder) {
	esc := func(s string) string {
		s = strings.ReplaceAll(s, "|", "\\|")
		s = strings.ReplaceAll(s, "<", "&lt;")
		return strings.ReplaceAll(s, ">", "&gt;")
	}
	sb.WriteString("|")
	for _, h := range t.head {
		sb.WriteString(" " + esc(h) + " |")
	}
	sb.WriteString("\n|")
	for i := range t.head {
		if t.right[i] {
			sb.WriteString("---:|")
		} else {
			sb.WriteString("---|")
		}
	}
	sb.WriteByte('\n')
	for _, r := range t.rows {
		sb.WriteString("|")
		for _, c := range r {
			sb.WriteString(" " + esc(c) + " |")
		}
		sb.WriteByte('\n')
	}
}

// displayNames returns the names to show for a list of kernel names: the
// readable short form, or the clipped full name where two different names
// share a short form (at::native::elementwise_kernel has dozens).
func displayNames(names []string, width int) []string {
	short := make([]string, len(names))
	count := map[string]map[string]bool{}
	for i, n := range names {
		short[i] = analyze.ShortName(n)
		if count[short[i]] == nil {
			count[short[i]] = map[string]bool{}
		}
		count[short[i]][n] = true
	}
	out := make([]string, len(names))
	for i, n := range names {
		if len(count[short[i]]) > 1 {
			out[i] = clip(n, width)
		} else {
			out[i] = clip(short[i], width)
		}
	}
	return out
}
