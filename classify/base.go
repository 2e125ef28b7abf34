package classify

import "strings"

// BaseName returns the kernel's own name: the demangled name without its
// return type, template arguments and parameter list
// ("void vllm::moe::topkGatingSoftmax<8, 128>(float const*, …)" reads
// "vllm::moe::topkGatingSoftmax"). The namespace spellings "(anonymous
// namespace)" and "<unnamed>" are kept. A name cut short inside its
// template arguments (a profiler table's "…") keeps what precedes them;
// a name that is not C++ (a Triton function, a cuBLAS cubin, a memcpy
// activity) comes back as it is, less a parenthesised suffix.
//
// Rules match the base name unless they say @full (doc.go): a family word
// in a template argument (ck::Embed<…> inside a convolution's template)
// says nothing about the kernel.
func BaseName(name string) string {
	s := strings.TrimSpace(name)
	// ROCm tools may name a kernel by its code-object descriptor symbol,
	// the kernel's symbol plus ".kd" ("_permute_kernel.kd").
	s = strings.TrimSuffix(s, ".kd")
	s = strings.TrimPrefix(s, "void ")
	// nsys prints a SFINAE return type with its comparison unbracketed
	// ("std::enable_if<T2>(int)0&&vllm::_typeConvert<T1>::exists,
	// void>::type vllm::fused_add_rms_norm_kernel<…>"), so its brackets do
	// not balance; the return type ends at its "::type ".
	if strings.HasPrefix(s, "std::enable_if<") {
		if i := strings.Index(s, ">::type "); i >= 0 {
			s = s[i+len(">::type "):]
		}
	}
	var (
		b     strings.Builder
		open  []byte // the brackets open at this point: '<' or '('
		word  = 0    // where the current word starts in b
		typed = false
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if len(open) == 0 {
			if kw := keptSpelling(s[i:]); kw != "" {
				b.WriteString(kw)
				i += len(kw) - 1
				continue
			}
		}
		switch c {
		case '<':
			open = append(open, '<')
			typed = true
			continue
		case '>':
			// A '>' closes a template argument list only; inside
			// parentheses ("(8)>(0)" in an enable_if) it compares.
			if len(open) > 0 && open[len(open)-1] == '<' {
				open = open[:len(open)-1]
				continue
			}
		case '(':
			if len(open) == 0 {
				// The parameter list (or a memcpy's "(Device -> Pinned)").
				return strings.TrimSpace(b.String()[word:])
			}
			open = append(open, '(')
			continue
		case ')':
			// Close the innermost '(' and whatever '<' it left open.
			for len(open) > 0 {
				last := open[len(open)-1]
				open = open[:len(open)-1]
				if last == '(' {
					break
				}
			}
			continue
		case ' ':
			if len(open) == 0 && (typed || strings.Contains(b.String()[word:], "::")) {
				// "std::enable_if<…>::type vllm::fused_add_rms_norm_kernel":
				// a C++ return type precedes the name.
				b.WriteByte(c)
				word, typed = b.Len(), false
				continue
			}
		}
		if len(open) == 0 {
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String()[word:])
}

// keptSpelling returns the namespace spelling s starts with, if any: the
// brackets in it are not template arguments or a parameter list.
func keptSpelling(s string) string {
	for _, kw := range [...]string{"(anonymous namespace)", "<unnamed>"} {
		if strings.HasPrefix(s, kw) {
			return kw
		}
	}
	return ""
}

// Scope says what a rule's pattern is matched against.
type Scope uint8

const (
	// ScopeBase matches the kernel's own name, BaseName: the default, so
	// that a word inside a template argument cannot decide a category.
	ScopeBase Scope = iota
	// ScopeFull matches the whole demangled name, template arguments and
	// parameters included: for a family that is named only inside a
	// wrapper's arguments (cutlass::device_kernel<flash::FlashAttnFwdSm90<…>>,
	// at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl…>).
	// A rules file says it with the word @full before the regexp.
	ScopeFull
)

// fullScope is ScopeFull's word in a rules file.
const fullScope = "@full"
