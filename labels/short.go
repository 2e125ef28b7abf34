package labels

import "strings"

// Short returns a readable form of a kernel name: the return type,
// template arguments and parameter list are dropped, so
// "void at::native::vectorized_elementwise_kernel<4, at::native::...>(int, ...)"
// becomes "at::native::vectorized_elementwise_kernel". Names without such
// parts come back unchanged. Used for tables and chart labels, never for
// matching.
func Short(name string) string {
	s := strings.TrimSpace(name)
	s = strings.TrimPrefix(s, "void ")
	var sb strings.Builder
	depth := 0  // inside <...>
	pdepth := 0 // inside (...) within <...>, where '<' and '>' compare
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case depth > 0 && c == '(':
			pdepth++
			continue
		case depth > 0 && c == ')':
			if pdepth > 0 {
				pdepth--
			}
			continue
		case depth > 0 && pdepth > 0:
			continue
		case c == '<':
			// "operator<" and "<unnamed>"-style tokens are rare; keep the
			// first level out of the output.
			depth++
			continue
		case c == '>' && depth > 0:
			depth--
			continue
		case depth > 0:
			continue
		case c == '(':
			// A parameter list starts the first '(' at top level, unless
			// it is "(anonymous namespace)".
			if strings.HasPrefix(s[i:], "(anonymous namespace)") {
				sb.WriteString("(anonymous namespace)")
				i += len("(anonymous namespace)") - 1
				continue
			}
			return lastWord(sb.String(), name)
		}
		sb.WriteByte(c)
	}
	return lastWord(sb.String(), name)
}

// lastWord drops a return type ("std::enable_if::type vllm::rms_norm_kernel"
// keeps "vllm::rms_norm_kernel"), treating "(anonymous namespace)" as one word.
func lastWord(s, orig string) string {
	const anon = "(anonymous namespace)"
	s = strings.TrimSpace(strings.ReplaceAll(s, anon, "\x00"))
	// Only a C++ qualified name has a return type to drop; "Memcpy HtoD"
	// stays whole.
	if i := strings.LastIndexByte(s, ' '); i >= 0 && strings.Contains(s[:i], "::") {
		s = s[i+1:]
	}
	s = strings.ReplaceAll(s, "\x00", anon)
	if s == "" {
		return orig
	}
	return s
}
