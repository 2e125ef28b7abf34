// Package labels names kernels in tables and charts: a short label for
// each kernel name, unique among the names it is given and a pure
// function of that set (Of), clipped without losing what tells it apart
// (Clip), and the readable short form of a C++ kernel name (Short).
package labels

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Width is the longest label tables and charts show a kernel by: it fits
// a chart's axis and a table column, and labels stay unique at this
// length.
const Width = 64

// Of gives each distinct name of names a short label, unique
// among all of them and at most width runes long (0: no limit):
//
//   - Short ("at::native::vectorized_elementwise_kernel"), with what
//     a dispatching template runs ("ck_tile::kentry<Rmsnorm2dFwd>");
//   - where several names share a short name, the first word of the
//     template arguments that only this one has, in angle brackets
//     ("…_kernel<CUDAFunctor_add>"), or the first pair of words only it
//     has ("<FillFunctor,BFloat16>");
//   - clipped to width with an ellipsis, keeping that hint;
//   - where labels are still equal, mostly because clipping made them so
//     (hipBLASLt's Cijk_… names differ hundreds of runes in), the first
//     token of the full name only this one has, after the ellipsis
//     ("Cijk_Alik_Bljk_…_MT32x32x256_MI…NTA4"), or as a hint when the label was
//     not clipped;
//   - whatever still collides, " #2", " #3"… in name order.
//
// The result depends on the set of names only, not on their order or on
// which of them a caller shows: make it from every kernel name of the
// inputs (window.Table.Names) and then select rows, so that `kernels --top 5`
// and the top chart label a kernel as the full table does.
//
// The map may be the one an earlier call with the same set and width
// returned: read it, never change it.
func Of(names []string, width int) map[string]string {
	uniq := slices.Clone(names)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	memo.Lock()
	defer memo.Unlock()
	if memo.out != nil && memo.width == width && slices.Equal(uniq, memo.names) {
		return memo.out
	}
	out := of(uniq, width)
	memo.names, memo.width, memo.out = uniq, width, out
	return out
}

// memo is the last set of names Of labelled, at its width: a report
// labels the same names for each of its tables and charts, and over
// 100k distinct 2 KB names (issue 19) one set took seconds. Equal sets
// of the same strings compare a pointer per name.
var memo struct {
	sync.Mutex
	names []string
	width int
	out   map[string]string
}

// of is Of of uniq, its names sorted and distinct.
func of(uniq []string, width int) map[string]string {
	label := hintedNames(uniq)
	if width > 0 {
		for i := range label {
			label[i] = Clip(label[i], width)
		}
		tokenHints(uniq, label, width)
	}
	numberCollisions(label, width)
	out := make(map[string]string, len(uniq))
	for i, n := range uniq {
		out[n] = label[i]
	}
	return out
}

// Ordered returns Of(names, width) in the order of names.
func Ordered(names []string, width int) []string {
	m := Of(names, width)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

// Clip clips a label of Of to n runes (0: no limit), keeping a
// trailing "<hint>", "…token" or " #k" that tells it apart from its
// namesakes.
func Clip(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i := max(strings.LastIndex(s, "<"), strings.LastIndex(s, "…"), strings.LastIndex(s, " #"))
	if i <= 0 {
		return clipRunes(s, n)
	}
	// The head keeps what the whole tail leaves, at least half; the tail
	// gets the rest.
	head, tail := s[:i], s[i:]
	keep := min(utf8.RuneCountInString(head), max(n-utf8.RuneCountInString(tail), n/2))
	if strings.HasPrefix(tail, "…") {
		// The tail brings its own ellipsis.
		head = firstRunes(head, keep)
	} else {
		head = clipRunes(head, keep)
	}
	return head + clipRunes(tail, n-utf8.RuneCountInString(head))
}

// firstRunes returns the first n runes of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// clipRunes shortens s to n runes with an ellipsis.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// hintedNames returns ShortName of each of names (sorted, distinct), with
// a hint where several share a short name: the first template word only
// this one has; else the template arguments at the positions where the
// group's members differ, if that tells it apart ("<256,16,true>": its
// words are its namesake's, in another order); else a pair of words only
// it has; else the tokens where its name first differs from the others'
// (sequenceHint).
func hintedNames(names []string) []string {
	short := make([]string, len(names))
	members := map[string][]int{}
	for i, n := range names {
		short[i] = Short(n)
		members[short[i]] = append(members[short[i]], i)
	}
	out := slices.Clone(short)
	wrap := make([]string, len(names))
	for i, n := range names {
		// "ck_tile::kentry" says nothing: what it runs does.
		if wrap[i] = wrapped(n, short[i]); wrap[i] != "" {
			out[i] = short[i] + "<" + wrap[i] + ">"
		}
	}
	// hinted is name i's label with hint h, after what it wraps.
	hinted := func(i int, h string) string {
		if wrap[i] != "" {
			h = wrap[i] + "," + h
		}
		return short[i] + "<" + h + ">"
	}
	for _, group := range members {
		if len(group) < 2 {
			continue
		}
		words := make([][]string, len(group))
		for k, i := range group {
			words[k] = hintWords(names[i], short[i])
		}
		g := newWordGroup(words)
		var rest []int // members without a distinct word
		wraps := map[string]int{}
		for _, i := range group {
			wraps[out[i]]++
		}
		for k, i := range group {
			if out[i] != short[i] && wraps[out[i]] == 1 {
				continue // told apart by what it wraps
			}
			if h := g.single(k, isDigits); h != "" {
				out[i] = hinted(i, h)
			} else {
				rest = append(rest, k)
			}
		}
		if len(rest) == 0 {
			continue
		}
		pos := positionalHints(names, short, group)
		seen := map[string]int{}
		taken := map[string]bool{}
		for k, i := range group {
			seen[pos[k]]++
			taken[out[i]] = true
		}
		var seqs [][]string // token sequences, made when first needed
		for _, k := range rest {
			i := group[k]
			h := ""
			if pos[k] != "" && seen[pos[k]] == 1 && !taken[hinted(i, pos[k])] {
				h = pos[k]
			}
			if h == "" {
				h = g.pair(k)
			}
			if h == "" && len(group) <= maxPairGroup {
				if seqs == nil {
					seqs = make([][]string, len(group))
					for j, m := range group {
						seqs[j] = tokenSeq(names[m])
					}
				}
				h = sequenceHint(seqs, k)
			}
			if h != "" && !taken[hinted(i, h)] {
				out[i] = hinted(i, h)
				taken[out[i]] = true
			}
		}
	}
	return out
}

// tokenSeq splits a name into its alphanumeric runs, in order, repeats
// kept.
func tokenSeq(name string) []string {
	return strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
	})
}

// sequenceHint tells member k of a group apart by where its token
// sequence first differs from each other member's: the tokens there (up
// to maxPositions of those places), a number or boolean led by the token
// before it ("Rmsnorm2dFusedAddEnum=1": two ck_tile kernels that differ in
// one enum value deep in their template arguments).
func sequenceHint(seqs [][]string, k int) string {
	mine := seqs[k]
	var at []int
	for j, other := range seqs {
		if j == k {
			continue
		}
		d := 0
		for d < len(mine) && d < len(other) && mine[d] == other[d] {
			d++
		}
		if d < len(mine) && !slices.Contains(at, d) {
			at = append(at, d)
		}
	}
	slices.Sort(at)
	var parts []string
	for _, d := range at[:min(len(at), maxPositions)] {
		tok := mine[d]
		if (isDigits(tok) || tok == "true" || tok == "false") && d > 0 {
			tok = mine[d-1] + "=" + tok
		}
		parts = append(parts, tok)
	}
	return strings.Join(parts, ",")
}

// wrappers are kernel templates that only dispatch to their first
// template argument: CK's kentry, CUTLASS's Kernel and device_kernel.
var wrappers = map[string]bool{"kentry": true, "Kernel": true, "Kernel2": true, "device_kernel": true}

// wrapped returns the word of the first non-numeric template argument of
// a wrapper kernel ("void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<…>,
// …>" gives Rmsnorm2dFwd), or "".
func wrapped(name, short string) string {
	last := short[strings.LastIndex(short, ":")+1:]
	if !wrappers[last] {
		return ""
	}
	for _, a := range templateArgs(name, short) {
		if w := argWord(a); w != "" && !isDigits(w) {
			return w
		}
	}
	return ""
}

// maxPositions is the most differing template arguments a hint shows.
const maxPositions = 3

// positionalHints returns, per member of group, its top-level template
// arguments (shortened by argWord) at the first maxPositions positions
// where the members' arguments differ, joined by commas.
func positionalHints(names, short []string, group []int) []string {
	args := make([][]string, len(group))
	width := 0
	for k, i := range group {
		args[k] = templateArgs(names[i], short[i])
		width = max(width, len(args[k]))
	}
	var varying []int
	for p := 0; p < width && len(varying) < maxPositions; p++ {
		at := func(k int) string {
			if p < len(args[k]) {
				return args[k][p]
			}
			return ""
		}
		for k := 1; k < len(group); k++ {
			if at(k) != at(0) {
				varying = append(varying, p)
				break
			}
		}
	}
	out := make([]string, len(group))
	for k := range group {
		parts := make([]string, 0, len(varying))
		for _, p := range varying {
			a := "–" // the member has no argument there
			if p < len(args[k]) {
				a = argWord(args[k][p])
			}
			parts = append(parts, a)
		}
		out[k] = strings.Join(parts, ",")
	}
	return out
}

// templateArgs splits the top-level template argument list that follows
// short in name ("void f<4, X<int>, 3>(…)" gives "4", "X<int>", "3").
func templateArgs(name, short string) []string {
	i := strings.Index(name, short)
	if i < 0 || i+len(short) >= len(name) || name[i+len(short)] != '<' {
		return nil
	}
	var out []string
	depth, start := 0, i+len(short)+1
	for j := start; j < len(name); j++ {
		switch name[j] {
		case '<', '(', '[':
			depth++
		case ')', ']':
			depth--
		case '>':
			if depth == 0 {
				return append(out, strings.TrimSpace(name[start:j]))
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(name[start:j]))
				start = j + 1
			}
		}
	}
	return out // unterminated: what was read
}

// argWord shortens a template argument for a hint: without its own
// template arguments and namespaces ("at::native::FillFunctor<float>"
// reads FillFunctor), a cast without its type ("(vllm::Kind)5" reads 5).
func argWord(a string) string {
	if strings.HasPrefix(a, "(") {
		if j := strings.LastIndexByte(a, ')'); j >= 0 && j+1 < len(a) {
			return a[j+1:]
		}
	}
	if j := strings.IndexByte(a, '<'); j > 0 {
		a = a[:j]
	}
	if j := strings.LastIndex(a, "::"); j >= 0 && j+2 < len(a) {
		a = a[j+2:]
	}
	return a
}

// wordGroup is the words of the members of a group of alike labels.
type wordGroup struct {
	words [][]string     // per member, in order, each once
	count map[string]int // members that have each word
	sets  []map[string]bool
}

func newWordGroup(words [][]string) *wordGroup {
	g := &wordGroup{words: words, count: map[string]int{}}
	for _, ws := range words {
		for _, w := range ws {
			g.count[w]++
		}
	}
	return g
}

// maxPairGroup bounds the groups searched for pairs of words: the search
// compares each member with every other, and a hostile trace may hold
// 10^5 names with one short name.
const maxPairGroup = 64

// single returns the first word of member k that no other member has, or
// "". Words for which weak reports true (bare numbers) are taken only when
// no other word serves.
func (g *wordGroup) single(k int, weak func(string) bool) string {
	for _, pass := range []bool{false, true} {
		for _, w := range g.words[k] {
			if g.count[w] == 1 && weak(w) == pass {
				return w
			}
		}
	}
	return ""
}

// pair returns the first pair of member k's words that no other member
// has both of, joined by a comma, or "".
func (g *wordGroup) pair(k int) string {
	if len(g.words) > maxPairGroup {
		return ""
	}
	if g.sets == nil {
		g.sets = make([]map[string]bool, len(g.words))
		for j, ws := range g.words {
			g.sets[j] = make(map[string]bool, len(ws))
			for _, w := range ws {
				g.sets[j][w] = true
			}
		}
	}
	const maxWords = 24 // bounds the search on huge names
	mine := g.words[k][:min(len(g.words[k]), maxWords)]
	for a := range mine {
		for b := a + 1; b < len(mine); b++ {
			shared := false
			for j, set := range g.sets {
				if j != k && set[mine[a]] && set[mine[b]] {
					shared = true
					break
				}
			}
			if !shared {
				return mine[a] + "," + mine[b]
			}
		}
	}
	return ""
}

// tokenHints tells apart labels that are still equal, mostly because
// clipping made them so: each member of such a group gets the first token
// of its full name that no other member has, or else the tokens where it
// first parts from each of them (sequenceHint), after the ellipsis (or as
// a "<hint>" when the label was not clipped).
func tokenHints(names, label []string, width int) {
	members := map[string][]int{}
	for i, l := range label {
		members[l] = append(members[l], i)
	}
	for l, group := range members {
		if len(group) < 2 {
			continue
		}
		toks := make([][]string, len(group))
		for k, i := range group {
			toks[k] = tokens(names[i])
		}
		g := newWordGroup(toks)
		var seqs [][]string // made when first needed
		for k, i := range group {
			tok := g.single(k, func(string) bool { return false })
			if tok == "" && len(group) <= maxPairGroup {
				// Where the name first parts from each namesake:
				// "tilesize128x128x32,t1r3s3" for TensorRT's sm80_xmma_….
				if seqs == nil {
					seqs = make([][]string, len(group))
					for j, m := range group {
						seqs[j] = alnumSeq(names[m])
					}
				}
				tok = sequenceHint(seqs, k)
			}
			if tok == "" {
				continue // a number serves
			}
			if !strings.Contains(l, "…") {
				// Not clipped, just alike (words hintWords skips, such
				// as "long", tell them apart): a hint like any other.
				label[i] = Clip(l+"<"+tok+">", width)
				continue
			}
			tok = "…" + clipRunes(tok, width/2)
			head := strings.TrimSuffix(l, "…")
			label[i] = firstRunes(head, max(8, width-utf8.RuneCountInString(tok))) + tok
		}
	}
}

// alnumSeq splits a name into its alphanumeric runs, in order, repeats
// kept.
func alnumSeq(name string) []string {
	return strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// tokens splits a name into its alphanumeric runs, in order, each once:
// "…_MT32x32x256_MI16x16x1_…" gives MT32x32x256, MI16x16x1.
func tokens(name string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// numberCollisions makes labels unique: the second and later holders of
// a label (in name order) get " #2", " #3"…, the head clipped so that the
// whole stays within width.
func numberCollisions(label []string, width int) {
	taken := make(map[string]bool, len(label))
	count := map[string]int{}
	var dup []int
	for i, l := range label {
		if taken[l] {
			dup = append(dup, i)
			continue
		}
		taken[l] = true
	}
	for _, i := range dup {
		base := label[i]
		for {
			count[base]++
			suffix := " #" + strconv.Itoa(count[base]+1)
			l := base + suffix
			if width > 0 {
				l = clipRunes(base, max(1, width-utf8.RuneCountInString(suffix))) + suffix
			}
			if !taken[l] {
				label[i] = l
				taken[l] = true
				break
			}
		}
	}
}

// hintStop are template-argument words too common to tell kernels apart.
var hintStop = map[string]bool{"at": true, "native": true, "c10": true, "std": true, "detail": true,
	"anonymous": true, "namespace": true, "void": true, "const": true, "unsigned": true, "int": true,
	"long": true, "char": true, "Array": true, "array": true, "lambda": true, "operator": true, "ul": true}

// hintWords splits the part of a kernel name after its short name into
// identifier-like words, in order, without the common ones.
func hintWords(name, short string) []string {
	rest := name
	if i := strings.Index(name, short); i >= 0 {
		rest = name[i+len(short):]
	}
	var out []string
	seen := map[string]bool{}
	// The words are the runs of ASCII letters, digits and '_'; every
	// byte of a multi-byte rune separates, as the rune does. A byte loop:
	// 100k distinct 2 KB names (issue 19) spent seconds per label set
	// splitting them rune by rune into a slice of every field.
	for i := 0; i < len(rest); {
		if !wordByte(rest[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(rest) && wordByte(rest[j]) {
			j++
		}
		w := rest[i:j]
		i = j
		if hintStop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// wordByte reports whether b belongs to a word of hintWords.
func wordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
