package classify

import (
	"fmt"
	"hash/maphash"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unsafe"
)

// Classifier maps kernel and activity names to categories with an ordered
// rule table. It is safe for concurrent use.
type Classifier struct {
	rules []Rule
	lits  litIndex
	plan  [][]branchPlan // per rule, per branch: its prefilter in literal ids

	// A trace has a few hundred to a few thousand distinct names but
	// millions of events, so Classify remembers every answer. A map behind an
	// RWMutex rather than a sync.Map: the hit path then converts nothing to
	// an interface and allocates nothing. The key is a 128-bit hash of the
	// name, not a copy of it: a trace of 100k distinct 2 KB names would
	// otherwise be held twice (issue 19); two names colliding is a 2^-128
	// chance.
	mu    sync.RWMutex
	cache map[nameKey]Category
	seeds [2]maphash.Seed
}

// nameKey is the cache key of a name.
type nameKey [2]uint64

func (c *Classifier) key(name string) nameKey {
	return nameKey{maphash.String(c.seeds[0], name), maphash.String(c.seeds[1], name)}
}

// New returns a classifier for rules, tried in order. Rules from Parse are
// ready to use; a Rule built in code is compiled here, and New panics if its
// category or pattern is invalid (use Parse to get an error instead).
func New(rules []Rule) *Classifier {
	rs := slices.Clone(rules)
	for i := range rs {
		if rs[i].re == nil {
			if err := rs[i].compile(); err != nil {
				panic(fmt.Sprintf("classify.New: rule %d: %v", i, err))
			}
		}
	}
	c := &Classifier{rules: rs, cache: make(map[nameKey]Category), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	c.plan = c.lits.build(rs)
	return c
}

// Classify returns the category ("top/sub") of a kernel or memcpy/memset
// activity name: that of the first rule that matches, or Unknown. It never
// returns "". Answers are cached per distinct name.
func (c *Classifier) Classify(name string) Category {
	k := c.key(name)
	c.mu.RLock()
	cat, ok := c.cache[k]
	c.mu.RUnlock()
	if ok {
		return cat
	}
	cat = Unknown
	if i := c.match(name); i >= 0 {
		cat = c.rules[i].Category
	}
	c.mu.Lock()
	c.cache[k] = cat // the name itself is neither kept nor pinned
	c.mu.Unlock()
	return cat
}

// matchRule returns the first rule that matches name, without using or
// filling the cache (for tests and benchmarks).
func (c *Classifier) matchRule(name string) (Rule, bool) {
	if i := c.match(name); i >= 0 {
		return c.rules[i], true
	}
	return Rule{}, false
}

func (c *Classifier) match(name string) int {
	// Rules are written against demangled names: parse demangles the
	// mangled names of ROCm traces before anything classifies them.
	return c.first(subjects{full: name, base: BaseName(name)})
}

// subjects are the two strings a rule can be matched against (Scope).
type subjects struct{ full, base string }

func (s subjects) of(scope Scope) string {
	if scope == ScopeFull {
		return s.full
	}
	return s.base
}

// first returns the index of the first rule matching its subject in s, or -1.
func (c *Classifier) first(s subjects) int {
	// The lower-cased copies live for this call only: their buffer is
	// pooled, so classifying a trace of many long names leaves no garbage
	// the size of the names (issue 19).
	bp := lowerBufs.Get().(*[]byte)
	defer lowerBufs.Put(bp)
	b := appendLowerASCII((*bp)[:0], s.full)
	nf := len(b)
	b = appendLowerASCII(b, s.base)
	*bp = b
	lowerFull := unsafe.String(unsafe.SliceData(b), nf)
	lowerBase := unsafe.String(unsafe.SliceData(b[nf:]), len(b)-nf)
	if !asciiExact(s.full) || !asciiExact(s.base) {
		for i := range c.rules {
			if c.rules[i].re.MatchString(s.of(c.rules[i].Scope)) {
				return i
			}
		}
		return -1
	}
	var found [2]bitset
	found[ScopeBase] = c.lits.scan(lowerBase)
	found[ScopeFull] = found[ScopeBase]
	if lowerFull != lowerBase {
		found[ScopeFull] = c.lits.scan(lowerFull)
	}
	for i, bps := range c.plan {
		scope := c.rules[i].Scope
		for j, bp := range bps {
			if bp.lit >= 0 {
				if found[scope].has(bp.lit) {
					return i
				}
				continue
			}
			if found[scope].hasAll(bp.need) && c.rules[i].branches[j].re.MatchString(s.of(scope)) {
				return i
			}
		}
	}
	return -1
}

// A branch is one top-level alternative of a rule's pattern. Matching a
// ~1 KB template name against ~100 case-insensitive regexps with dozens of
// alternatives each costs milliseconds (RE2 runs its NFA over every byte),
// and an uncached Classify is paid once per distinct name in a trace. So each
// alternative is matched on its own, and only when the lower-cased name
// contains the literals it cannot match without; an alternative that is just
// a literal is a substring test and never reaches the regexp engine.
type branch struct {
	re   *regexp.Regexp // nil for a literal branch
	lit  string         // non-empty: the branch is exactly this case-insensitive literal
	need [][]string     // every group must have a member in the lower-cased name
}

// split compiles the top-level alternatives of pattern, matched
// case-insensitively. Each alternative is taken as written when the text
// tells them apart (topAlternatives): printing a parsed alternative back to
// a pattern (syntax.Regexp.String) walks every rune of a case-folded
// negated class such as [^a-z], which made compiling the default rules cost
// 60 ms of every command. The parsed pattern's alternatives are the
// fallback.
func split(pattern string) ([]branch, error) {
	if alts, ok := topAlternatives(pattern); ok {
		bs := make([]branch, 0, len(alts))
		for _, a := range alts {
			at, err := syntax.Parse("(?i)"+a, syntax.Perl)
			if err != nil {
				return nil, err
			}
			b, err := newBranch(at, "(?i)"+a)
			if err != nil {
				return nil, err
			}
			bs = append(bs, b)
		}
		return bs, nil
	}
	t, err := syntax.Parse("(?i)"+pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	alts := []*syntax.Regexp{t}
	if t.Op == syntax.OpAlternate {
		alts = t.Sub
	}
	bs := make([]branch, 0, len(alts))
	for _, a := range alts {
		b, err := newBranch(a, "")
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// newBranch makes the branch of the parsed alternative a, whose pattern is
// src ("": a's printed form). A case-insensitive literal is a substring
// test and gets no regexp.
func newBranch(a *syntax.Regexp, src string) (branch, error) {
	b := branch{need: required(a)}
	if a.Op == syntax.OpLiteral && a.Flags&syntax.FoldCase != 0 && len(b.need) == 1 {
		b.lit = b.need[0][0]
		return b, nil
	}
	if src == "" {
		src = a.String()
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return branch{}, err
	}
	b.re = re
	return b, nil
}

// topAlternatives cuts a valid RE2 pattern at its top-level '|'s, or says
// it cannot (ok false) when a piece would not mean alone what it means in
// the pattern: a flag group without a colon, (?-i), holds to the end of the
// enclosing group, past the next '|', and \Q...\E quotes '|'.
func topAlternatives(p string) (alts []string, ok bool) {
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && p[i+1] == 'Q' {
				return nil, false
			}
			i++
		case '[':
			e := classEnd(p, i)
			if e < 0 {
				return nil, false
			}
			i = e
		case '(':
			if flagGroup(p[i:]) {
				return nil, false
			}
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				alts = append(alts, p[start:i])
				start = i + 1
			}
		}
	}
	return append(alts, p[start:]), depth == 0
}

// classEnd returns the index of the ']' closing the class that starts at
// p[i] ('['), or -1.
func classEnd(p string, i int) int {
	i++
	if i < len(p) && p[i] == '^' {
		i++
	}
	if i < len(p) && p[i] == ']' { // a leading ']' is itself
		i++
	}
	for ; i < len(p); i++ {
		switch {
		case p[i] == '\\':
			i++
		case p[i] == '[' && i+1 < len(p) && p[i+1] == ':': // [:alpha:]
			e := strings.Index(p[i+2:], ":]")
			if e < 0 {
				return -1
			}
			i += 2 + e + 1
		case p[i] == ']':
			return i
		}
	}
	return -1
}

// flagGroup reports whether p starts with a flag group that has no colon,
// such as (?i) or (?-s).
func flagGroup(p string) bool {
	if !strings.HasPrefix(p, "(?") {
		return false
	}
	for i := 2; i < len(p); i++ {
		switch c := p[i]; {
		case c == ')':
			return i > 2
		case c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default: // ':' (a scoped group), '<', 'P<' (a name), ...
			return false
		}
	}
	return false
}

// branchPlan is a branch's prefilter with literals replaced by their ids in
// the classifier's litIndex.
type branchPlan struct {
	lit  int32     // >= 0: the branch is exactly this literal
	need [][]int32 // as branch.need
}

// litIndex finds, in one pass over a lower-cased name, which of the rules'
// literals it contains; a substring test per literal would scan a 1 KB name
// about a thousand times.
type litIndex struct {
	lits   []string
	single [256][]int32 // one-byte literals, by byte
	// Longer literals, chained by their first two bytes: head[pair] is
	// 1 + the first literal id with that prefix (0: none), next[id] the same
	// for the following one. A flat table, because a map lookup per byte of
	// the name costs more than everything else in the scan.
	head *[1 << 16]int32
	next []int32
}

// build indexes the literals of rules and returns their plans.
func (x *litIndex) build(rules []Rule) [][]branchPlan {
	ids := make(map[string]int32)
	x.head = new([1 << 16]int32)
	id := func(l string) int32 {
		if i, ok := ids[l]; ok {
			return i
		}
		i := int32(len(x.lits))
		ids[l] = i
		x.lits = append(x.lits, l)
		x.next = append(x.next, 0)
		if len(l) == 1 {
			x.single[l[0]] = append(x.single[l[0]], i)
		} else {
			k := uint16(l[0])<<8 | uint16(l[1])
			x.next[i] = x.head[k]
			x.head[k] = i + 1
		}
		return i
	}
	plan := make([][]branchPlan, len(rules))
	for i, r := range rules {
		plan[i] = make([]branchPlan, len(r.branches))
		for j, b := range r.branches {
			bp := branchPlan{lit: -1}
			if b.lit != "" {
				bp.lit = id(b.lit)
			}
			for _, g := range b.need {
				ig := make([]int32, len(g))
				for k, l := range g {
					ig[k] = id(l)
				}
				bp.need = append(bp.need, ig)
			}
			plan[i][j] = bp
		}
	}
	return plan
}

// scan returns the set of literals that occur in lower.
func (x *litIndex) scan(lower string) bitset {
	found := make(bitset, (len(x.lits)+63)/64)
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		for _, id := range x.single[c] {
			found.add(id)
		}
		if i+1 == len(lower) {
			break
		}
		for id := x.head[uint16(c)<<8|uint16(lower[i+1])] - 1; id >= 0; id = x.next[id] - 1 {
			if strings.HasPrefix(lower[i:], x.lits[id]) {
				found.add(id)
			}
		}
	}
	return found
}

// bitset is a set of literal ids.
type bitset []uint64

func (b bitset) add(i int32)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// hasAll reports whether every group has a member in b.
func (b bitset) hasAll(need [][]int32) bool {
	for _, g := range need {
		if !slices.ContainsFunc(g, b.has) {
			return false
		}
	}
	return true
}

// foldsToASCII holds the non-ASCII runes that case-insensitive matching
// treats as equal to an ASCII letter (KELVIN SIGN ~ k, LONG S ~ s). A name
// holding one can match a rule without containing its lower-case literal,
// so such names go straight to the regexps.
var foldsToASCII = func() string {
	var b strings.Builder
	for c := 'a'; c <= 'z'; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= 0x80 {
				b.WriteRune(f)
			}
		}
	}
	return b.String()
}()

// lowerBufs holds the buffers first lower-cases names into.
var lowerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// lowerASCII lower-cases the ASCII letters of s and reports whether
// substring tests on the result are exact for case-insensitive matching of
// ASCII literals.
func lowerASCII(s string) (string, bool) {
	return string(appendLowerASCII(nil, s)), asciiExact(s)
}

// appendLowerASCII appends s to b with its ASCII letters lower-cased.
func appendLowerASCII(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// asciiExact reports whether substring tests on s lower-cased are exact
// for case-insensitive matching of ASCII literals: s has no rune that
// folds to an ASCII letter.
func asciiExact(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return !strings.ContainsAny(s, foldsToASCII)
		}
	}
	return true
}

// required returns groups of lower-case strings such that every match of re
// contains a member of every group, or nil if it finds none. Groups are
// ordered most selective first, so a failing test usually fails at once.
func required(re *syntax.Regexp) [][]string {
	var groups [][]string
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		for _, c := range s {
			if c >= 0x80 {
				return nil
			}
		}
		l, _ := lowerASCII(s)
		return [][]string{{l}}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			groups = append(groups, required(s)...)
		}
	case syntax.OpAlternate:
		// A match contains a member of one branch's group; take each
		// branch's best group and require any of them.
		var any []string
		for _, s := range re.Sub {
			g := required(s)
			if g == nil {
				return nil
			}
			any = append(any, g[0]...)
		}
		return [][]string{any}
	}
	slices.SortStableFunc(groups, func(a, b []string) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return groups
}

// better prefers the group whose shortest string is longest (fewer false
// hits), then the one with fewer strings (fewer searches).
func better(a, b []string) bool {
	ma, mb := minLen(a), minLen(b)
	return ma > mb || ma == mb && len(a) < len(b)
}

func minLen(ss []string) int {
	m := len(ss[0])
	for _, s := range ss[1:] {
		m = min(m, len(s))
	}
	return m
}
