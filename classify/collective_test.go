package classify

import "testing"

func TestCollectiveCategory(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want string // "" for no collective
	}{
		// Kineto's "Collective name" as ProcessGroupNCCL records it.
		{"allreduce", "communication/allreduce"},
		{"allreduce_coalesced", "communication/allreduce"},
		{"_allgather_base", "communication/allgather"},
		{"allgather", "communication/allgather"},
		{"allgather_into_tensor_coalesced", "communication/allgather"},
		{"all_gather_into_tensor", "communication/allgather"},
		{"reduce_scatter", "communication/reduce_scatter"},
		{"_reduce_scatter_base", "communication/reduce_scatter"},
		{"reduce_scatter_tensor_coalesced", "communication/reduce_scatter"},
		{"all_to_all", "communication/all_to_all"},
		{"alltoall_base", "communication/all_to_all"},
		{"all_to_all_single", "communication/all_to_all"},
		{"all_to_allv", "communication/all_to_all"},
		{"broadcast", "communication/broadcast"},
		{"_broadcast_oop", "communication/broadcast"},
		{"reduce", "communication/reduce"},
		{"_reduce_oop", "communication/reduce"},
		{"send", "communication/send_recv"},
		{"recv", "communication/send_recv"},
		{"batch_isend_irecv", "communication/send_recv"},
		{"gather", "communication/other"},
		{"scatter", "communication/other"},
		{"barrier", "communication/other"},
		// Functional collectives, NCCL calls and NVTX ranges, vLLM helpers.
		{"_c10d_functional::all_gather_into_tensor", "communication/allgather"},
		{"c10d::allreduce_", "communication/allreduce"},
		{"ncclAllReduce", "communication/allreduce"},
		{"ncclReduceScatter", "communication/reduce_scatter"},
		{"ncclAllGather", "communication/allgather"},
		{"ncclSend", "communication/send_recv"},
		{"nccl:all_reduce", "communication/allreduce"},
		{"nccl:_all_gather_base", "communication/allgather"},
		{"all_gatherv", "communication/allgather"},
		{"reduce_scatterv", "communication/reduce_scatter"},
		{" AllReduce ", "communication/allreduce"},
		// Not collectives.
		{"", ""},
		{"record_param_comms", ""},
		{"aten::mm", ""},
		{"v", ""},
		{"allreduce_fusion", ""},
	} {
		got, ok := CollectiveCategory(tc.op)
		if tc.want == "" {
			if ok {
				t.Errorf("CollectiveCategory(%q) = %s, true; want no collective", tc.op, got)
			}
			continue
		}
		if !ok || got.String() != tc.want {
			t.Errorf("CollectiveCategory(%q) = %s, %v; want %s", tc.op, got, ok, tc.want)
		}
	}
}

// TestCollectiveCategoryMatchesRules checks that a collective's category
// from its op is the one the rules give its NCCL kernel, so that a kernel
// named for its collective and one that takes it from the op are counted
// together.
func TestCollectiveCategoryMatchesRules(t *testing.T) {
	for op, kernel := range map[string]string{
		"allreduce":       "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
		"_allgather_base": "ncclDevKernel_AllGather_RING_LL",
		"reduce_scatter":  "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL",
		"broadcast":       "ncclDevKernel_Broadcast_RING_LL",
		"reduce":          "ncclDevKernel_Reduce_Sum_bf16_RING_LL",
		"send":            "ncclDevKernel_SendRecv",
		"all_to_all":      "ncclDevKernel_AllToAll_RING_SIMPLE",
	} {
		c, ok := CollectiveCategory(op)
		if want := Default().Classify(kernel); !ok || c != want {
			t.Errorf("CollectiveCategory(%q) = %s, %v; the rules give %s %s", op, c, ok, kernel, want)
		}
	}
}
