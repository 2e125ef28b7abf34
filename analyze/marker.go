package analyze

import "strings"

// Marker families, in the order FindSteps prefers them when a trace holds
// several: the serving engines' own per-forward markers carry the step kind
// and the finest granularity; ProfilerStep#N is a profiler schedule tick that
// may wrap several engine steps.
const (
	FamilyVLLM     = "vllm"     // execute_[T_]context_C(...)_generation_G(...)
	FamilySGLang   = "sglang"   // step[DECODE bs=32]
	FamilyVLLMOld  = "vllm-old" // execute_new_N_cached_M
	FamilyProfiler = "profiler" // ProfilerStep#N
	FamilyCustom   = "custom"   // matched by --step REGEX
	familyNone     = ""
)

var familyRank = map[string]int{FamilyVLLM: 0, FamilySGLang: 1, FamilyVLLMOld: 2, FamilyProfiler: 3}

// Marker is what the text of a step marker says.
type Marker struct {
	Family string
	Kind   StepKind
	// Context and Generation are vLLM's request counts (execute_context_C,
	// _generation_G; execute_new_N_cached_M gives N and M); -1 otherwise.
	Context, Generation int64
}

// ParseMarker recognises the built-in step markers:
//
//	ProfilerStep#N                                   step
//	execute_context_C(...)_generation_G(...)         vLLM: C==0 && G>0 decode, G==0 prefill, else mixed
//	execute_T_context_C(...)_generation_G(...)       the same with the token count first
//	execute_new_N_cached_M                           older vLLM: N new, M cached requests, same rule
//	step[DECODE ...] / step[EXTEND ...] / step[PREFILL ...] / step[MIXED ...]   SGLang, any case
//
// The parenthesised parts are not read (their format has changed between
// vLLM versions: "(888_788544)", "(sq0sk0sqsq0sqsk0)"), so parsing is lenient
// about them and about anything after the last number.
func ParseMarker(name string) (Marker, bool) {
	m := Marker{Context: -1, Generation: -1}
	low := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(low, "profilerstep#"):
		if _, ok := leadingInt(low[len("profilerstep#"):]); !ok {
			return m, false
		}
		m.Family, m.Kind = FamilyProfiler, KindStep
		return m, true
	case strings.HasPrefix(low, "execute_new_"):
		n, ok1 := leadingInt(low[len("execute_new_"):])
		i := strings.Index(low, "_cached_")
		if !ok1 || i < 0 {
			return m, false
		}
		c, ok2 := leadingInt(low[i+len("_cached_"):])
		if !ok2 {
			return m, false
		}
		m.Family, m.Context, m.Generation = FamilyVLLMOld, n, c
		m.Kind = vllmKind(n, c)
		return m, true
	case strings.HasPrefix(low, "execute_"):
		ci := strings.Index(low, "context_")
		gi := strings.Index(low, "_generation_")
		if ci < 0 || gi < ci {
			return m, false
		}
		// Only digits may stand between "execute_" and "context_".
		if mid := strings.TrimSuffix(low[len("execute_"):ci], "_"); mid != "" {
			if _, ok := leadingInt(mid); !ok || len(digitsPrefix(mid)) != len(mid) {
				return m, false
			}
		}
		c, ok1 := leadingInt(low[ci+len("context_"):])
		g, ok2 := leadingInt(low[gi+len("_generation_"):])
		if !ok1 || !ok2 {
			return m, false
		}
		m.Family, m.Context, m.Generation = FamilyVLLM, c, g
		m.Kind = vllmKind(c, g)
		return m, true
	case strings.HasPrefix(low, "step["):
		word := low[len("step["):]
		if i := strings.IndexAny(word, " ]\t,"); i >= 0 {
			word = word[:i]
		} else {
			return m, false // unclosed and without arguments: not SGLang's
		}
		m.Family = FamilySGLang
		switch word {
		case "decode":
			m.Kind = KindDecode
		case "extend", "prefill":
			m.Kind = KindPrefill
		case "mixed":
			m.Kind = KindMixed
		default: // idle, target_verify, draft_extend, ...
			m.Kind = KindStep
		}
		return m, true
	}
	return m, false
}

// vllmKind applies vLLM's rule: no context (prefill) requests and some
// generation (decode) requests is a decode step; no generation requests is
// a prefill step; both is mixed.
func vllmKind(ctx, gen int64) StepKind {
	switch {
	case ctx == 0 && gen > 0:
		return KindDecode
	case gen == 0:
		return KindPrefill
	}
	return KindMixed
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// leadingInt reads the decimal number s starts with (at most 18 digits).
func leadingInt(s string) (int64, bool) {
	d := digitsPrefix(s)
	if d == "" || len(d) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(d); i++ {
		n = n*10 + int64(d[i]-'0')
	}
	return n, true
}
