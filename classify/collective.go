package classify

import "strings"

// CollectiveCategory returns the communication category of a collective op
// as torch.distributed, c10d and NCCL name it — Kineto's "Collective name"
// arg ("allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced",
// "all_to_all_single"), a functional-collective op ("all_gather_into_tensor"),
// an NCCL call ("ncclAllReduce", "nccl:all_reduce") or a vLLM helper
// ("all_gatherv") — and whether op names a collective it knows. The sub
// level is the collective, as for a kernel the rules classify by name, so a
// generically named kernel (ncclDevKernel_Generic, communication/other) can
// take its category from the op that launched it.
//
// Variants name the same collective: "_base", "_coalesced",
// "_into_tensor", "_tensor", "_single", "_oop" and a trailing "v" (uneven
// sizes) are dropped. Gather, scatter and barrier have no sub of their own:
// communication/other.
func CollectiveCategory(op string) (Category, bool) {
	s := strings.ToLower(strings.TrimSpace(op))
	for _, p := range [...]string{"_c10d_functional::", "c10d_functional::", "c10d::", "nccl:", "rccl:"} {
		s = strings.TrimPrefix(s, p)
	}
	if strings.HasPrefix(s, "nccl") || strings.HasPrefix(s, "rccl") {
		s = s[len("nccl"):] // ncclAllReduce, rcclAllToAll
	}
	s = strings.TrimLeft(s, "_")
	for {
		t := s
		for _, suf := range [...]string{"_base", "_coalesced", "_into_tensor", "_tensor", "_single", "_oop", "_inplace"} {
			s = strings.TrimSuffix(s, suf)
		}
		if s == t {
			break
		}
	}
	s = strings.ReplaceAll(s, "_", "")
	if sub, ok := collectiveOps[s]; ok {
		return Category{Communication, sub}, true
	}
	if sub, ok := collectiveOps[strings.TrimSuffix(s, "v")]; ok && strings.HasSuffix(s, "v") {
		return Category{Communication, sub}, true // all_gatherv, all_to_allv
	}
	return Category{}, false
}

// collectiveOps maps normalized op names (lower case, no underscores, no
// variant suffix) to their communication sub level.
var collectiveOps = map[string]string{
	"allreduce":       "allreduce",
	"allgather":       "allgather",
	"reducescatter":   "reduce_scatter",
	"alltoall":        "all_to_all",
	"broadcast":       "broadcast",
	"reduce":          "reduce",
	"send":            "send_recv",
	"recv":            "send_recv",
	"isend":           "send_recv",
	"irecv":           "send_recv",
	"sendrecv":        "send_recv",
	"batchisendirecv": "send_recv",
	"p2p":             "send_recv",
	"gather":          "other",
	"scatter":         "other",
	"barrier":         "other",
}
