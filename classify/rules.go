package classify

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxLine is the longest line a rules file may hold, in bytes; LineLimit
// says it in words for error messages.
const (
	MaxLine   = 1 << 20
	LineLimit = "1 MiB"
)

//go:embed rules.txt
var defaultRules string

// defaultSource names the embedded file in Rule.Source and in errors.
const defaultSource = "rules.txt"

// Rule is one line of a rules file: names matching Pattern are in Category.
type Rule struct {
	Category Category
	Pattern  string // Go RE2 syntax, matched case-insensitively and unanchored
	Scope    Scope  // what Pattern is matched against: the base name unless ScopeFull
	Source   string // "file:line" the rule came from; "" for rules built in code

	re       *regexp.Regexp // the whole pattern, case-insensitive
	branches []branch       // its top-level alternatives, for fast matching
}

// compile validates r.Category and compiles r.Pattern.
func (r *Rule) compile() error {
	if _, err := ParseCategory(r.Category.String()); err != nil {
		return err
	}
	// Compile the pattern as written first, so that a syntax error quotes
	// what the user wrote rather than our "(?i)" prefix.
	if _, err := regexp.Compile(r.Pattern); err != nil {
		return fmt.Errorf("bad regexp %q: %v", r.Pattern, err)
	}
	re, err := regexp.Compile("(?i)" + r.Pattern)
	if err != nil {
		return fmt.Errorf("bad regexp %q: %v", r.Pattern, err)
	}
	r.re = re
	r.branches, err = split(r.Pattern)
	if err != nil {
		return fmt.Errorf("bad regexp %q: %v", r.Pattern, err)
	}
	return nil
}

var defaultOnce = sync.OnceValue(func() *Classifier {
	rules, err := Parse(strings.NewReader(defaultRules), defaultSource, nil)
	if err != nil {
		// The embedded file is tested; this is a build defect, not user input.
		panic("classify: embedded " + err.Error())
	}
	return New(rules)
})

// Default returns the classifier for the embedded default rules. It is
// shared: every call returns the same *Classifier, which is safe for
// concurrent use.
func Default() *Classifier { return defaultOnce() }

// Load returns a classifier for the rules file at path: its rules are tried
// before the default rules, or replace them if the file contains a line
// "!replace". Errors name the file and line ("my.rules:12: bad regexp ...").
func Load(path string) (*Classifier, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rules, err := Parse(f, path, Default().rules)
	if err != nil {
		return nil, err
	}
	return New(rules), nil
}

// Parse reads a rules file and returns its rules followed by base (the file's
// rules are tried first), or only its own rules if the file contains the
// directive "!replace". source names the file in Rule.Source and in errors.
//
// Format, one item per line (leading and trailing blanks are ignored):
//
//	# a comment                    (only as a whole line)
//	!replace                       (a directive; applies to the whole file)
//	category<blanks>regexp         (a rule; the regexp is the rest of the line)
//	category<blanks>@full<blanks>regexp (a rule matched against the full name)
func Parse(r io.Reader, source string, base []Rule) ([]Rule, error) {
	var own []Rule
	replace := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	n := 0
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
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("%s:%d: invalid UTF-8", source, n)
		}
		if line[0] == '!' {
			if line != "!replace" {
				return nil, fmt.Errorf("%s:%d: unknown directive %q (the only one is !replace)", source, n, line)
			}
			replace = true
			continue
		}
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return nil, fmt.Errorf("%s:%d: want \"category<TAB>regexp\", got %q", source, n, line)
		}
		cat, err := ParseCategory(line[:i])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", source, n, err)
		}
		rule := Rule{
			Category: cat,
			Pattern:  strings.TrimLeft(line[i:], " \t"),
			Source:   fmt.Sprintf("%s:%d", source, n),
		}
		if strings.HasPrefix(rule.Pattern, "@") {
			// A scope word between the category and the regexp. Kernel
			// names hold no '@', so no useful regexp starts with one.
			word, rest := rule.Pattern, ""
			if j := strings.IndexAny(word, " \t"); j >= 0 {
				word, rest = word[:j], strings.TrimLeft(word[j:], " \t")
			}
			if word != fullScope {
				return nil, fmt.Errorf("%s:%d: unknown scope %q (the only one is %s)", source, n, word, fullScope)
			}
			if rest == "" {
				return nil, fmt.Errorf("%s:%d: want \"category<TAB>%s<TAB>regexp\", got %q", source, n, fullScope, line)
			}
			rule.Pattern, rule.Scope = rest, ScopeFull
		}
		if err := rule.compile(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", source, n, err)
		}
		own = append(own, rule)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %s, the limit", source, n+1, LineLimit)
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if replace {
		return own, nil
	}
	return append(own, base...), nil
}

// WriteRules writes the effective rule table in the rules-file format. The
// output starts with "!replace", so loading it reproduces the table exactly
// instead of adding to the defaults.
func (c *Classifier) WriteRules(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# traceq classification rules: the effective table, tried in order, first match wins.\n")
	fmt.Fprintf(bw, "# Names no rule matches are %s. Loading this file reproduces the table.\n", Unknown)
	fmt.Fprintf(bw, "!replace\n")
	for _, r := range c.rules {
		if r.Source != "" {
			fmt.Fprintf(bw, "\n# %s\n", r.Source)
		}
		if r.Scope == ScopeFull {
			fmt.Fprintf(bw, "%s\t%s\t%s\n", r.Category, fullScope, r.Pattern)
		} else {
			fmt.Fprintf(bw, "%s\t%s\n", r.Category, r.Pattern)
		}
	}
	return bw.Flush()
}
