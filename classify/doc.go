// Package classify maps GPU kernel and memcpy/memset activity names, as
// torch.profiler (Kineto) and Nsight Systems print them, to categories.
//
// A category id is "top/sub". The top level is one of fourteen ids, in a
// canonical order that reports use for columns, legends and colours (see
// Tops): communication, gemm, moe, attention, kv_cache, cast, norm,
// activation, rotary, sampling, embedding, elementwise, memcpy, other. The sub
// level names the family or library ("gemm/marlin", "attention/fa3"); for
// communication it is the collective ("communication/allreduce",
// "communication/all_to_all", ...) whatever library ran it. A name that no
// rule matches is Unknown ("other/unknown"); Classify never returns "".
//
// # Rules
//
// Classification is data: an ordered table of rules, tried top to bottom,
// where the first match wins. The defaults are the file rules.txt in this
// package, embedded in the binary; Default returns a classifier for them.
// The file format, which user files share, is one rule per line:
//
//	# a comment naming the kernels the next rules are for
//	gemm/cublas	^(void )?(ampere|volta|sm\d+)_\w*gemm
//
// that is, the category, blanks (tabs or spaces), then a regular expression
// (Go RE2 syntax) that runs to the end of the line. Expressions are matched
// case-insensitively (write (?-i) to turn that off) and unanchored (write ^
// and $). Lines whose first non-blank character is # are comments and blank
// lines are ignored; there are no end-of-line comments. The top level of
// every category must be one of Tops: Parse rejects any other.
//
// An expression is matched against the kernel's own name, BaseName: the
// demangled name without return type, template arguments and parameter
// list, so that a family word inside a template argument (the ck::Embed<…>
// descriptors of a Composable Kernel convolution) decides nothing. A rule
// for a launch wrapper whose arguments name what it runs
// (cutlass::device_kernel<flash::FlashAttnFwdSm90<…>>) says @full before
// its expression and is matched against the whole name (ScopeFull):
//
//	attention/fa3	@full	flash::\w*flashattn
//
// Order carries meaning: specific rules precede general ones, e.g. Inductor's
// triton_poi_fused_add_all_reduce_4 is an elementwise kernel, so the Inductor
// rules come before the communication keywords; rules.txt explains each such
// choice next to the rules concerned.
//
// Rules are written against demangled names only: package parse demangles
// the Itanium-mangled kernel names ("_ZN5aiter…") of ROCm traces before
// they reach a classifier (parse.DemangleName for names from elsewhere),
// code-object descriptor symbols ("_ZN5aiter…E.kd") included.
//
// # Extending and replacing
//
// Load reads a user rules file. By default it EXTENDS the defaults: the
// user's rules are tried first, so they can both add and override. A file
// that contains the directive line
//
//	!replace
//
// REPLACES the defaults instead: only its own rules are used. WriteRules
// prints a classifier's effective table in the same format, starting with
// !replace, so that loading the output reproduces the table exactly.
//
// # Speed
//
// Classify caches its answer per distinct name, so a trace with millions of
// events pays the rule table once per kernel name. Even uncached, regular
// expressions run only when the name contains literals they cannot match
// without, found in a single pass over the lower-cased name.
package classify
