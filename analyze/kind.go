package analyze

import (
	"fmt"
	"strings"
)

// StepKind says what a step did. Its values are in report order: groups,
// tables and charts list kinds in this order.
type StepKind uint8

const (
	// KindAny is no kind: the zero value of a filter (Options.Kind) that
	// keeps every kind. No step or group has it.
	KindAny StepKind = iota
	// KindAll is the single window of a trace without step markers.
	KindAll
	KindDecode  // decode steps: every request generates a token
	KindPrefill // prefill (extend) steps: prompts only
	KindMixed   // both in one step (chunked prefill)
	KindStep    // a step whose marker does not say (ProfilerStep#N, --step REGEX)
	// KindNone holds GPU time that belongs to no step of a stepped trace.
	KindNone

	numKinds = int(KindNone) + 1
)

var kindNames = [numKinds]string{
	KindAny:     "",
	KindAll:     "all",
	KindDecode:  "decode",
	KindPrefill: "prefill",
	KindMixed:   "mixed",
	KindStep:    "step",
	KindNone:    "unattributed",
}

func (k StepKind) String() string {
	if int(k) < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// StepKinds are the kinds a filter may name, in report order.
func StepKinds() []StepKind {
	return []StepKind{KindAll, KindDecode, KindPrefill, KindMixed, KindStep, KindNone}
}

// ParseStepKind returns the kind named s ("decode"); "" is KindAny.
func ParseStepKind(s string) (StepKind, bool) {
	for i, n := range kindNames {
		if n == s {
			return StepKind(i), true
		}
	}
	return KindAny, false
}

// NoKindError reports a step-kind filter that selects nothing, with what
// the inputs hold instead.
type NoKindError struct {
	Kind  StepKind
	Found [numKinds]int // steps of each kind (KindAll: inputs without steps)
}

func (e *NoKindError) Error() string {
	what := "no " + e.Kind.String() + " steps"
	switch e.Kind {
	case KindStep:
		what = "no steps of kind step (ProfilerStep#N or --step)"
	case KindAll:
		what = "every input has step markers (kind all is a trace without them; --no-steps makes one)"
	case KindNone:
		what = "no GPU activity outside the steps"
	}
	var found []string
	for k, n := range e.Found {
		if n > 0 && StepKind(k) != KindNone && StepKind(k) != KindAll {
			found = append(found, fmt.Sprintf("%s ×%d", StepKind(k), n))
		}
	}
	if n := e.Found[KindAll]; n > 0 {
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

// CheckKind reports a NoKindError when kind (not KindAny) selects no
// activity of inputs, like grep's exit 1 for no match.
func CheckKind(inputs []Input, kind StepKind) error {
	if kind == KindAny {
		return nil
	}
	e := &NoKindError{Kind: kind}
	hit := false
	for _, in := range inputs {
		if in.Steps == nil {
			e.Found[KindAll]++
			hit = hit || kind == KindAll
			continue
		}
		for _, s := range in.Steps.List {
			e.Found[s.Kind]++
		}
		if kind == KindNone {
			for _, s := range in.Steps.Of {
				if s < 0 {
					hit = true
					break
				}
			}
		}
	}
	if hit || (kind != KindAll && kind != KindNone && e.Found[kind] > 0) {
		return nil
	}
	return e
}
