package trace

import (
	"strings"
	"unicode/utf8"
)

// MaxNameLen caps the length of a name kept in the model, in bytes: a name
// of hundreds of MB (a generated kernel, a hostile file) would otherwise
// be held several times over. Both parsers cut longer names with CutName
// and count an anomaly, AnomLongName.
const MaxNameLen = 64 << 10

// AnomLongName is the anomaly of a name cut to MaxNameLen.
const AnomLongName = "name longer than 64 KiB truncated"

// CutName returns s cut to MaxNameLen bytes on a UTF-8 boundary, and
// whether it was cut.
func CutName(s string) (string, bool) {
	if len(s) <= MaxNameLen {
		return s, false
	}
	n := MaxNameLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Interner assigns NameIDs to strings. Strings are cloned on first sight so
// that the model never pins a parser's input buffer.
type Interner struct {
	ids   map[string]NameID
	names []string
}

// NewInterner returns an interner whose id 0 is the empty string.
func NewInterner() *Interner {
	in := &Interner{ids: map[string]NameID{}}
	in.ID("")
	return in
}

// ID returns the id of s, assigning the next one if s is new.
func (in *Interner) ID(s string) NameID {
	if id, ok := in.ids[s]; ok { // the lookup does not allocate
		return id
	}
	s = strings.Clone(s)
	id := NameID(len(in.names))
	in.ids[s] = id
	in.names = append(in.names, s)
	return id
}

// Adopt is ID for a string the caller owns and never changes (another
// interner's, say): it is kept as it is, not copied. A parser that interns
// in parallel and merges the workers' names stores each name once.
func (in *Interner) Adopt(s string) NameID {
	if id, ok := in.ids[s]; ok {
		return id
	}
	id := NameID(len(in.names))
	in.ids[s] = id
	in.names = append(in.names, s)
	return id
}

// Names returns the table, indexed by NameID. The interner may still grow
// it; the returned slice stays valid for the ids handed out so far.
func (in *Interner) Names() []string { return in.names }

// Len returns the number of names.
func (in *Interner) Len() int { return len(in.names) }
