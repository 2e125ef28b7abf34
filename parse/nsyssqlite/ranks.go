package nsyssqlite

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/trace"
)

// Naming the ranks of an export (issue 24). A multi-process export holds
// one rank per process that ran GPU work; what the export says of each
// process names it, from the most to the least direct source:
//
//  1. NCCL's own NVTX payload of ncclCommInitRank ("Rank" of the
//     communicator with the most ranks the process joined), exported with
//     `nsys export --include-blobs=true`;
//  2. a thread (or the process) name: vLLM's VLLM::Worker_TP5,
//     Worker_PP1_TP3, Worker_DP0_TP2; MPI's "MPI Rank 3";
//  3. the environment captured with the process (RANK,
//     OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID,
//     MV2_COMM_WORLD_RANK);
//  4. the CUDA device of each process, when every process used one, each
//     its own (ranks in device order).
//
// The first source that names every GPU process, each with its own rank,
// names them all; Meta.RankSource says which. A single-process export
// takes its rank from the first three only (its device says nothing of
// its rank).

// rankCandidate is what one source says of one process: its rank and the
// name the source gave it.
type rankCandidate struct {
	rank int
	name string
}

// rankSources holds, per process of the trace (index into Procs), what
// each source says; a process the source is silent on is absent.
type rankSources struct {
	nccl, thread, env map[int]rankCandidate
	device            map[int]int32 // the one device a process used
}

// assignRanks names the GPU processes gpu (indices into t.Procs) from
// src and records the source.
func assignRanks(t *trace.Trace, gpu []int, src rankSources) {
	if len(gpu) == 0 {
		return
	}
	try := func(s trace.RankSource, cands map[int]rankCandidate) bool {
		seen := map[int]bool{}
		for _, p := range gpu {
			c, ok := cands[p]
			if !ok || c.rank < 0 || seen[c.rank] {
				return false
			}
			seen[c.rank] = true
		}
		for _, p := range gpu {
			t.Procs[p].Rank, t.Procs[p].RankName = cands[p].rank, cands[p].name
		}
		t.Meta.RankSource = s
		if len(gpu) == 1 {
			t.Meta.Rank = cands[gpu[0]].rank
		}
		return true
	}
	if try(trace.RankFromNCCL, src.nccl) || try(trace.RankFromThreadName, src.thread) || try(trace.RankFromEnv, src.env) {
		return
	}
	if len(gpu) < 2 {
		return
	}
	devs := map[int32]int{}
	for _, p := range gpu {
		d, ok := src.device[p]
		if !ok {
			return
		}
		devs[d]++
	}
	if len(devs) != len(gpu) {
		return // two processes on one device (or one device id each, per CUDA_VISIBLE_DEVICES)
	}
	order := slices.Sorted(func(yield func(int32) bool) {
		for d := range devs {
			if !yield(d) {
				return
			}
		}
	})
	byDev := map[int]rankCandidate{}
	for _, p := range gpu {
		d := src.device[p]
		byDev[p] = rankCandidate{rank: slices.Index(order, d), name: fmt.Sprintf("cuda:%d", d)}
	}
	try(trace.RankFromDevice, byDev)
}

// workerName matches vLLM's worker thread and process names:
// VLLM::Worker_TP5, Worker_PP1_TP3, Worker_DP0_TP2 (any of DP, PP, TP,
// in that order).
var workerName = regexp.MustCompile(`(?:^|[^A-Za-z0-9])Worker((?:_DP\d+)?(?:_PP\d+)?(?:_TP\d+)?)$`)

// mpiName matches the thread names MPI runtimes give ("MPI Rank 3").
var mpiName = regexp.MustCompile(`^MPI Rank (\d+)$`)

// parallelDims are a vLLM worker's data, pipeline and tensor parallel
// ranks, -1 when absent.
type parallelDims struct{ dp, pp, tp int }

func parseWorker(name string) (parallelDims, string, bool) {
	m := workerName.FindStringSubmatch(name)
	if m == nil || m[1] == "" {
		return parallelDims{}, "", false
	}
	d := parallelDims{-1, -1, -1}
	for _, part := range strings.Split(strings.TrimPrefix(m[1], "_"), "_") {
		n, err := strconv.Atoi(part[2:])
		if err != nil || n < 0 || n > 1<<20 {
			return parallelDims{}, "", false
		}
		switch part[:2] {
		case "DP":
			d.dp = n
		case "PP":
			d.pp = n
		case "TP":
			d.tp = n
		}
	}
	return d, strings.TrimPrefix(m[1], "_"), true
}

// threadRanks names processes from their thread names (and their own
// name): a vLLM worker's global rank is ((dp·PP)+pp)·TP+tp, the sizes
// being one more than the largest index seen; an MPI rank is its number.
// names maps each process to its names, in a fixed order.
func threadRanks(names map[int][]string) map[int]rankCandidate {
	out := map[int]rankCandidate{}
	workers := map[int]parallelDims{}
	labels := map[int]string{}
	for p, ns := range names {
		for _, n := range ns {
			if d, label, ok := parseWorker(n); ok {
				if _, dup := workers[p]; dup && labels[p] != label {
					workers[p] = parallelDims{-2, -2, -2} // two different workers: no name
					continue
				}
				workers[p], labels[p] = d, label
			} else if m := mpiName.FindStringSubmatch(n); m != nil {
				if r, err := strconv.Atoi(m[1]); err == nil {
					out[p] = rankCandidate{rank: r, name: n}
				}
			}
		}
	}
	if len(workers) == 0 {
		return out
	}
	size := parallelDims{1, 1, 1}
	for _, d := range workers {
		size.dp, size.pp, size.tp = max(size.dp, d.dp+1), max(size.pp, d.pp+1), max(size.tp, d.tp+1)
	}
	for p, d := range workers {
		if d.dp == -2 {
			continue
		}
		r := (max(d.dp, 0)*size.pp+max(d.pp, 0))*size.tp + max(d.tp, 0)
		out[p] = rankCandidate{rank: r, name: labels[p]}
	}
	return out
}

// rankEnv are the environment variables that hold a process's global
// rank, most specific first.
var rankEnv = []string{"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"}

// envRank reads a rank from environment variables (name → value).
func envRank(env map[string]string) (rankCandidate, bool) {
	for _, k := range rankEnv {
		if v, ok := env[k]; ok {
			if r, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && r >= 0 {
				return rankCandidate{rank: r, name: k + "=" + strconv.Itoa(r)}, true
			}
		}
	}
	return rankCandidate{}, false
}

// parseEnvAssignment splits `NAME="value"` (META_DATA_CAPTURE's
// spelling) or `NAME=value`.
func parseEnvAssignment(s string) (string, string, bool) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", false
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return k, v, true
}

// ncclInit is what one ncclCommInitRank payload says.
type ncclInit struct{ rank, nranks int64 }

// nvtxPayload is how to read the fields of one payload schema: the
// offset and size of "Rank" and "No. of ranks".
type nvtxPayload struct {
	rankOff, rankSize     int
	nranksOff, nranksSize int
}

// payloadTypeSize is the size of the integer NVTX payload entry types
// (nvToolsExtPayload.h, LP64), 0 for others.
func payloadTypeSize(t int64) int {
	switch t {
	case 1, 2, 11, 12:
		return 1
	case 3, 4, 13, 14:
		return 2
	case 5, 6, 15, 16:
		return 4
	case 7, 8, 9, 10, 17, 18, 22:
		return 8
	}
	return 0
}

// payloadHeader is the size of the header nsys writes before a payload
// in NVTX_EVENTS.binaryData: domain id, schema id (u32 each, padded), the
// payload size and the total size (u64 each).
const payloadHeader = 32

// decodeInit reads an ncclCommInitRank payload: the header's schema id
// must be one of schemas.
func decodeInit(blob []byte, schemas map[int64]nvtxPayload) (ncclInit, bool) {
	if len(blob) < payloadHeader {
		return ncclInit{}, false
	}
	le := func(b []byte) int64 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return int64(v)
	}
	id := le(blob[8:12])
	s, ok := schemas[id]
	if !ok {
		return ncclInit{}, false
	}
	body := blob[payloadHeader:]
	field := func(off, size int) (int64, bool) {
		if off < 0 || size == 0 || off+size > len(body) {
			return 0, false
		}
		v := le(body[off : off+size])
		if size < 8 && v>>(8*size-1) != 0 {
			return 0, false // negative
		}
		return v, v >= 0 && v <= 1<<30
	}
	r, ok1 := field(s.rankOff, s.rankSize)
	n, ok2 := field(s.nranksOff, s.nranksSize)
	if !ok1 || !ok2 || r >= n {
		return ncclInit{}, false
	}
	return ncclInit{rank: r, nranks: n}, true
}

// bestInit picks a process's rank among the communicators it joined:
// the one with the most ranks (the world), the first of equals.
func bestInit(inits []ncclInit) (ncclInit, bool) {
	if len(inits) == 0 {
		return ncclInit{}, false
	}
	best := inits[0]
	for _, in := range inits[1:] {
		if cmp.Compare(in.nranks, best.nranks) > 0 {
			best = in
		}
	}
	return best, true
}
