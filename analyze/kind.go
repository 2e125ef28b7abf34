package analyze

import "fmt"

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
