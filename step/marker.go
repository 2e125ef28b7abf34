package step

import "strings"

// Marker families, in the order Find prefers them when a trace holds
// several: the serving engines' own per-forward markers carry the step kind
// and the finest granularity; ProfilerStep#N is a profiler schedule tick that
// may wrap several engine steps.
const (
	familyVLLM     = "vllm"     // execute_[T_]context_C(...)_generation_G(...)
	familySGLang   = "sglang"   // step[DECODE bs=32]
	familyATOM     = "atom"     // prefill[bs=2 tok=14721 ...], decode[bs=117/128 tok=117 ...]
	familyVLLMOld  = "vllm-old" // execute_new_N_cached_M
	familyProfiler = "profiler" // ProfilerStep#N
	familyCustom   = "custom"   // matched by --step REGEX
	familyNone     = ""
)

var familyRank = map[string]int{familyVLLM: 0, familySGLang: 1, familyATOM: 2, familyVLLMOld: 3, familyProfiler: 4}

// marker is what the text of a step marker says.
type marker struct {
	Family string
	Kind   Kind
	// Context and Generation are vLLM's request counts (execute_context_C,
	// _generation_G; execute_new_N_cached_M gives N and M); -1 otherwise.
	Context, Generation int64
	// Tokens is the number of tokens the step computed, as the marker
	// states it; -1 when it does not (see parseMarker).
	Tokens int64
}

// parseMarker recognises the built-in step markers:
//
//	ProfilerStep#N                                   step
//	execute_context_C(c)_generation_G(g)             vLLM: C==0 && G>0 decode, G==0 prefill, else mixed; c+g tokens
//	execute_T_context_C(...)_generation_G(...)       the same with the token count T first
//	execute_new_N_cached_M                           older vLLM: N new, M cached requests, same rule
//	step[DECODE ...] / step[EXTEND ...] / step[PREFILL ...] / step[MIXED ...]   SGLang, any case
//	prefill[bs=B tok=T ...] / decode[bs=B/P tok=T ...]                          ATOM
//
// Token counts: vLLM's T, else c+g (the numbers each parenthesised part
// starts with: "(888_788544)" gives 888); SGLang's toks=T, else ext=E
// plus dec=D, else bs=B for a decode step (one token per request);
// ATOM's tok=T. Markers that do not say have Tokens -1.
//
// Graph-capture markers (ATOM's capture_128_decode) are not steps: they
// time the recording of a CUDA graph, not a forward pass.
//
// Parsing is lenient about the parenthesised parts (their format has
// changed between vLLM versions: "(888_788544)", "(sq0sk0sqsq0sqsk0)")
// and about anything after the last number it reads.
func parseMarker(name string) (marker, bool) {
	m := marker{Context: -1, Generation: -1, Tokens: -1}
	low := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(low, "profilerstep#"):
		if _, ok := leadingInt(low[len("profilerstep#"):]); !ok {
			return m, false
		}
		m.Family, m.Kind = familyProfiler, Generic
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
		m.Family, m.Context, m.Generation = familyVLLMOld, n, c
		m.Kind = vllmKind(n, c)
		return m, true
	case strings.HasPrefix(low, "execute_"):
		return parseVLLM(low, m)
	case strings.HasPrefix(low, "step["):
		return parseSGLang(low, m)
	case strings.HasPrefix(low, "prefill[bs="), strings.HasPrefix(low, "decode[bs="):
		return parseATOM(low, m)
	}
	return m, false
}

func parseVLLM(low string, m marker) (marker, bool) {
	ci := strings.Index(low, "context_")
	gi := strings.Index(low, "_generation_")
	if ci < 0 || gi < ci {
		return m, false
	}
	// Only digits may stand between "execute_" and "context_": the
	// detailed variant's token count.
	total := int64(-1)
	if mid := strings.TrimSuffix(low[len("execute_"):ci], "_"); mid != "" {
		n, ok := leadingInt(mid)
		if !ok || len(digitsPrefix(mid)) != len(mid) {
			return m, false
		}
		total = n
	}
	cs, gs := low[ci+len("context_"):], low[gi+len("_generation_"):]
	c, ok1 := leadingInt(cs)
	g, ok2 := leadingInt(gs)
	if !ok1 || !ok2 {
		return m, false
	}
	m.Family, m.Context, m.Generation = familyVLLM, c, g
	m.Kind = vllmKind(c, g)
	m.Tokens = total
	if total < 0 {
		ct, ok1 := parenInt(cs[len(digitsPrefix(cs)):])
		gt, ok2 := parenInt(gs[len(digitsPrefix(gs)):])
		if ok1 && ok2 {
			m.Tokens = ct + gt
		}
	}
	return m, true
}

// parenInt reads the number that starts a parenthesised part: "(888_7)"
// gives 888.
func parenInt(s string) (int64, bool) {
	if !strings.HasPrefix(s, "(") {
		return 0, false
	}
	return leadingInt(s[1:])
}

func parseSGLang(low string, m marker) (marker, bool) {
	word := low[len("step["):]
	if i := strings.IndexAny(word, " ]\t,"); i >= 0 {
		word = word[:i]
	} else {
		return m, false // unclosed and without arguments: not SGLang's
	}
	m.Family = familySGLang
	switch word {
	case "decode":
		m.Kind = Decode
	case "extend", "prefill":
		m.Kind = Prefill
	case "mixed":
		m.Kind = Mixed
	default: // idle, target_verify, draft_extend, ...
		m.Kind = Generic
	}
	args := low[len("step[")+len(word):]
	if t, ok := argInt(args, "toks="); ok {
		m.Tokens = t
	} else if e, ok := argInt(args, "ext="); ok {
		if d, ok := argInt(args, "dec="); ok {
			m.Tokens = e + d
		}
	} else if bs, ok := argInt(args, "bs="); ok && m.Kind == Decode {
		m.Tokens = bs
	}
	return m, true
}

// parseATOM reads AMD ATOM's markers: prefill[bs=2 tok=14721 ctx=[7803,
// 6918]] and decode[bs=117/128 tok=117 d=117] (117 real requests in a
// CUDA graph padded to 128).
func parseATOM(low string, m marker) (marker, bool) {
	word, args, _ := strings.Cut(low, "[")
	if _, ok := leadingInt(args[len("bs="):]); !ok || !strings.HasSuffix(low, "]") {
		return m, false
	}
	m.Family = familyATOM
	m.Kind = Prefill
	if word == "decode" {
		m.Kind = Decode
	}
	if t, ok := argInt(args, "tok="); ok {
		m.Tokens = t
	}
	return m, true
}

// argInt reads the number after key in a space-separated argument list
// ("bs=2 toks=14721"): key must start the list or follow a blank.
func argInt(args, key string) (int64, bool) {
	for i := 0; i < len(args); {
		j := strings.Index(args[i:], key)
		if j < 0 {
			return 0, false
		}
		j += i
		if j == 0 || args[j-1] == ' ' || args[j-1] == '\t' || args[j-1] == '[' {
			return leadingInt(args[j+len(key):])
		}
		i = j + len(key)
	}
	return 0, false
}

// vllmKind applies vLLM's rule: no context (prefill) requests and some
// generation (decode) requests is a decode step; no generation requests is
// a prefill step; both is mixed.
func vllmKind(ctx, gen int64) Kind {
	switch {
	case ctx == 0 && gen > 0:
		return Decode
	case gen == 0:
		return Prefill
	}
	return Mixed
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
