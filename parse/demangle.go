package parse

import (
	"slices"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/traceq/traceq/trace"
)

// maxDemangled bounds a demangled name to 2^16 bytes (64 KiB, the cap on
// names): a crafted mangled name can expand far beyond its own length.
const maxDemangled = 16

// DemangleName returns the demangled form of an Itanium C++ mangled name
// ("_ZN5aiter24add_rmsnorm_quant_kernelI…" reads "void
// aiter::add_rmsnorm_quant_kernel<…>(…)"), or name itself when it is not
// one or the demangler rejects it. ROCm traces record kernel names
// mangled; classification rules, labels and tables read demangled names.
//
// ROCm tools may also name a kernel by its code-object descriptor, the
// kernel's symbol plus ".kd" ("_ZN5aiter32fmha_fwd_hd192_hd128_bf16_causalE.kd").
// The descriptor is the kernel's, so it reads as the kernel's demangled
// name ("aiter::fmha_fwd_hd192_hd128_bf16_causal"); Demangle keeps the raw
// spelling.
func DemangleName(name string) string {
	if !strings.HasPrefix(name, "_Z") {
		return name
	}
	if stem, ok := strings.CutSuffix(name, kdSuffix); ok {
		if d := demangleOrKeep(stem); d != stem {
			return d
		}
		return name
	}
	return demangleOrKeep(name)
}

// kdSuffix ends a ROCm kernel-descriptor symbol.
const kdSuffix = ".kd"

// demangleOrKeep never lets a demangler failure, panic included, cost
// more than the readable name.
func demangleOrKeep(name string) (out string) {
	defer func() {
		if recover() != nil {
			out = name
		}
	}()
	s, err := demangle.ToString(name, demangle.NoRust, demangle.MaxLength(maxDemangled))
	if err != nil || s == "" {
		return name
	}
	return s
}

// Demangle rewrites the mangled names of t's GPU activities to their
// demangled form (DemangleName) and records each raw name in t.Mangled,
// keyed by the name's id, for outputs that carry it (JSON's "mangled").
// Parsers call it once the trace is complete; classify then sees the
// names a reader does. A demangled name that the trace already holds
// (both spellings of one kernel) takes that name's id, so that names stay
// distinct; the raw spelling is then not kept.
func Demangle(t *trace.Trace) {
	// Most traces hold no mangled name at all (Kineto demangles): the
	// names say so without a pass over every activity.
	if !slices.ContainsFunc(t.Names, func(n string) bool { return strings.HasPrefix(n, "_Z") }) {
		return
	}
	used := make([]bool, len(t.Names))
	mangled := false
	for i := range t.Activities {
		id := t.Activities[i].Name
		if !used[id] {
			used[id] = true
			mangled = mangled || strings.HasPrefix(t.Names[id], "_Z")
		}
	}
	if !mangled {
		return
	}
	var existing map[string]trace.NameID // built on the first demangled name
	var remap map[trace.NameID]trace.NameID
	for id, u := range used {
		raw := t.Names[id]
		if !u || !strings.HasPrefix(raw, "_Z") {
			continue
		}
		d := DemangleName(raw)
		if d == raw {
			continue
		}
		if existing == nil {
			existing = make(map[string]trace.NameID, len(t.Names))
			for j, n := range t.Names {
				if _, dup := existing[n]; !dup {
					existing[n] = trace.NameID(j)
				}
			}
		}
		if other, ok := existing[d]; ok {
			if remap == nil {
				remap = map[trace.NameID]trace.NameID{}
			}
			remap[trace.NameID(id)] = other
			continue
		}
		t.Names[id] = d
		existing[d] = trace.NameID(id)
		if t.Mangled == nil {
			t.Mangled = map[trace.NameID]string{}
		}
		t.Mangled[trace.NameID(id)] = raw
	}
	if remap == nil {
		return
	}
	for i := range t.Activities {
		if to, ok := remap[t.Activities[i].Name]; ok {
			t.Activities[i].Name = to
		}
	}
	// Names take part in the activities' order.
	t.Sort()
}
