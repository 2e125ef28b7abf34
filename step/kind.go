package step

import (
	"fmt"
	"strings"
)

// Kind is what a step did, read from its marker (parseMarker).
type Kind uint8

const (
	Decode  Kind = iota + 1 // every request generates a token
	Prefill                 // prompts only (SGLang's extend)
	Mixed                   // both in one step (chunked prefill)
	Generic                 // the marker does not say: ProfilerStep#N, a custom marker
)

var kindNames = [...]string{Decode: "decode", Prefill: "prefill", Mixed: "mixed", Generic: "step"}

func (k Kind) String() string {
	if k >= Decode && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Scope says what a window covers.
type Scope uint8

const (
	Whole   Scope = iota // the whole trace: a trace without step markers
	InStep               // one step
	Outside              // a stepped trace's activities that belong to no step
)

// Class is what groups, tables and the --kind filter sort windows by: the
// window's scope and, for a step, the step's kind. Its String is the
// step_kind of the JSON documents: all, decode, prefill, mixed, step,
// unattributed (docs/definitions.md#step-kind).
type Class struct {
	Scope Scope
	Kind  Kind // a step's; 0 for the other scopes
}

// The classes of the windows that are not steps.
var (
	WholeTrace   = Class{Scope: Whole}
	Unattributed = Class{Scope: Outside}
)

// ClassOf is the class of the steps of kind k.
func ClassOf(k Kind) Class { return Class{Scope: InStep, Kind: k} }

// numClasses counts the classes: the whole trace, the kinds, outside.
const numClasses = int(Generic) + 2

// index numbers the classes in report order: groups, tables and charts
// list them so.
func (c Class) index() int {
	switch c.Scope {
	case Whole:
		return 0
	case InStep:
		return int(c.Kind)
	}
	return numClasses - 1
}

func classAt(i int) Class {
	switch i {
	case 0:
		return WholeTrace
	case numClasses - 1:
		return Unattributed
	}
	return ClassOf(Kind(i))
}

func (c Class) String() string {
	switch c.Scope {
	case Whole:
		return "all"
	case Outside:
		return "unattributed"
	}
	return c.Kind.String()
}

// Compare orders classes as reports list them: the whole trace, decode,
// prefill, mixed, step, unattributed.
func (c Class) Compare(d Class) int { return c.index() - d.index() }

// classes lists every class in report order.
func classes() []Class {
	out := make([]Class, numClasses)
	for i := range out {
		out[i] = classAt(i)
	}
	return out
}

// Filter is a selection of windows by class (the --kind of every
// command): its zero value keeps all.
type Filter struct {
	class Class
	on    bool
}

// Only keeps the windows of class c.
func Only(c Class) Filter { return Filter{class: c, on: true} }

// ParseFilter reads a class name ("decode", "all", "unattributed"); ""
// keeps every class. ok is false for a name it does not know.
func ParseFilter(s string) (f Filter, ok bool) {
	if s == "" {
		return Filter{}, true
	}
	for _, c := range classes() {
		if c.String() == s {
			return Only(c), true
		}
	}
	return Filter{}, false
}

// FilterNames lists the names ParseFilter takes: the step kinds, then
// the windows that are not steps.
func FilterNames() string {
	var names []string
	for _, c := range classes()[1:] {
		names = append(names, c.String())
	}
	return strings.Join(append(names, WholeTrace.String()), ", ")
}

// Keeps reports whether the filter keeps windows of class c.
func (f Filter) Keeps(c Class) bool { return !f.on || f.class == c }

// Class returns the class the filter keeps; ok is false for a filter
// that keeps every class.
func (f Filter) Class() (c Class, ok bool) { return f.class, f.on }

// NoKindError reports a filter that selects nothing, with what the
// inputs hold instead.
type NoKindError struct {
	Class Class
	found [numClasses]int // steps of each class; WholeTrace: inputs without steps
}

func (e *NoKindError) Error() string {
	what := "no " + e.Class.String() + " steps"
	switch e.Class {
	case ClassOf(Generic):
		what = "no steps of kind step (ProfilerStep#N or a custom marker)"
	case WholeTrace:
		what = "every input has step markers (kind all is a trace without them)"
	case Unattributed:
		what = "no GPU activity outside the steps"
	}
	var found []string
	for i, n := range e.found {
		if c := classAt(i); n > 0 && c.Scope == InStep {
			found = append(found, fmt.Sprintf("%s ×%d", c, n))
		}
	}
	if n := e.found[0]; n > 0 {
		found = append(found, fmt.Sprintf("%d %s without step markers", n, plural(n, "input")))
	}
	if len(found) == 0 {
		return what
	}
	return what + "; found " + strings.Join(found, ", ")
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// Check reports a NoKindError when f selects no window of the inputs
// whose steps are given (nil: an input without step markers), like
// grep's exit 1 for no match.
func (f Filter) Check(inputs []*Steps) error {
	if !f.on {
		return nil
	}
	e := &NoKindError{Class: f.class}
	hit := false
	for _, st := range inputs {
		if st == nil {
			e.found[0]++
			hit = hit || f.class == WholeTrace
			continue
		}
		for _, s := range st.List {
			e.found[ClassOf(s.Kind).index()]++
		}
		if f.class == Unattributed && st.outside() {
			hit = true
		}
	}
	if hit || (f.class.Scope == InStep && e.found[f.class.index()] > 0) {
		return nil
	}
	return e
}
