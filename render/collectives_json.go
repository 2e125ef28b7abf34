package render

import "github.com/traceq/traceq/collectives"

// The document of traceq collectives --format json (docs/json.md,
// "collectives"). Fields are only ever added.

type jsonLink struct {
	Name  string  `json:"name"` // "" for a figure given as a number
	GBps  float64 `json:"gbs"`
	About string  `json:"about"`
	// Source is the nccl-tests output a measured link was read from.
	Source string `json:"source,omitempty"`
}

type jsonCollRank struct {
	Rank         *int   `json:"rank"`
	Index        int    `json:"index"`
	Path         string `json:"path"`
	PID          int64  `json:"pid"`
	KernelNS     int64  `json:"kernel_ns"`
	TransferNS   int64  `json:"transfer_ns"`
	WaitNS       int64  `json:"wait_ns"`
	LastArrivals int64  `json:"last_arrivals"`
	// SplitCount: Op.SplitInstances > 0 only.
	SplitCount *int64 `json:"split_count,omitempty"`
	jsonRankID
}

type jsonStraggler struct {
	Rank         *int    `json:"rank"`
	LastArrivals int64   `json:"last_arrivals"`
	Index        int     `json:"index"`
	Path         string  `json:"path"`
	PID          int64   `json:"pid"`
	Instances    int64   `json:"instances"`
	Share        float64 `json:"share"`
	Distinct     bool    `json:"distinct"`
	jsonRankID
}

type jsonCollSize struct {
	Bytes      *int64   `json:"bytes"` // null: unknown
	Instances  int64    `json:"instances"`
	TransferNS int64    `json:"transfer_ns"`
	AlgBW      *float64 `json:"algbw_gbs"`
	BusBW      *float64 `json:"busbw_gbs"`
	LinkShare  *float64 `json:"link_share"`
	Source     string   `json:"source"`
}

type jsonCollective struct {
	Op                 string         `json:"op"`
	StepKind           string         `json:"step_kind"`
	GroupSize          int            `json:"group_size"`
	Instances          int64          `json:"instances"`
	UnmatchedInstances int64          `json:"unmatched_instances"`
	KernelNS           int64          `json:"kernel_ns"`
	TransferNS         int64          `json:"transfer_ns"`
	WaitNS             int64          `json:"wait_ns"`
	Straggler          *jsonStraggler `json:"straggler"`
	Ranks              []jsonCollRank `json:"ranks"`
	Sizes              []jsonCollSize `json:"sizes"`
	// Added to the contract.
	Run            string   `json:"run"`
	ProcessGroup   string   `json:"process_group"`
	GroupRanks     string   `json:"process_group_ranks"`
	UnmatchedNS    int64    `json:"unmatched_ns"`
	StepKindNS     int64    `json:"step_kind_kernel_ns"`
	Share          float64  `json:"share"`
	UpperBound     bool     `json:"upper_bound"`
	SizedInstances int64    `json:"sized_instances"`
	SizedTransfer  int64    `json:"sized_transfer_ns"`
	AlgBW          *float64 `json:"algbw_gbs"`
	BusBW          *float64 `json:"busbw_gbs"`
	LinkShare      *float64 `json:"link_share"`
	// Issue 19: the args against the match.
	ArgsGroupSize int   `json:"args_group_size"`
	SizeConflicts int64 `json:"size_conflicts"`
	UnusableArgs  int64 `json:"unusable_args"`
	// Steps is what the per-step figures divide the op's sums by.
	Steps int `json:"steps"`
	// Issue 24: runs over hosts and expert parallelism.
	Phase          string    `json:"phase"`
	Host           string    `json:"host"`
	Rules          []string  `json:"communicator_rules"`
	Scope          string    `json:"link_scope"`
	OpLink         *jsonLink `json:"op_link"`
	TokenInstances int64     `json:"token_instances"`
	TokenImbalance *float64  `json:"token_imbalance"`
	// The token imbalance by the split sizes, only where some instance
	// carries them (omitted otherwise).
	SplitInstances int64    `json:"split_instances,omitempty"`
	SplitImbalance *float64 `json:"split_imbalance,omitempty"`
}

// jsonCollectivesDoc is the document of traceq collectives --format json.
type jsonCollectivesDoc struct {
	Inputs        []jsonInput      `json:"inputs"`
	Link          *jsonLink        `json:"link"`
	BytesPerToken int64            `json:"bytes_per_token"`
	Collectives   []jsonCollective `json:"collectives"`
	// Settings says where the link and the bytes per token came from.
	Settings []jsonSetting `json:"settings"`
	// Links are --link's per-scope links (intra=…,inter=…); null for the
	// one-link form.
	Links *jsonLinks `json:"links"`
}

type jsonLinks struct {
	Intra *jsonLink `json:"intra"`
	Inter *jsonLink `json:"inter"`
}

func jsonLinkOf(l *collectives.Link) *jsonLink {
	if l == nil {
		return nil
	}
	return &jsonLink{Name: l.Name, GBps: l.GBps, About: l.About, Source: l.Source}
}

func jsonStrag(s *collectives.Straggler) *jsonStraggler {
	if s == nil {
		return nil
	}
	return &jsonStraggler{Rank: s.Number, LastArrivals: s.LastArrivals, Index: s.Index, Path: s.Path, PID: s.PID,
		Instances: s.Instances, Share: s.Share(), Distinct: s.Distinct, jsonRankID: rankID(s.Rank)}
}

func collectivesDoc(ct *collectives.Table) jsonCollectivesDoc {
	doc := jsonCollectivesDoc{Inputs: jsonInputs(ct.Source.Inputs), BytesPerToken: ct.BytesPerToken, Collectives: []jsonCollective{}}
	doc.Link = jsonLinkOf(ct.Link)
	if ct.Links.Given() && ct.Links.All == nil {
		doc.Links = &jsonLinks{Intra: jsonLinkOf(ct.Links.Intra), Inter: jsonLinkOf(ct.Links.Inter)}
	}
	for _, o := range ct.Ops {
		j := jsonCollective{Op: o.Op, StepKind: o.Class.String(), GroupSize: o.GroupSize, Instances: o.Instances,
			UnmatchedInstances: o.UnmatchedInstances, KernelNS: o.KernelNS, TransferNS: o.TransferNS, WaitNS: o.WaitNS,
			Straggler: jsonStrag(o.Straggler), Ranks: []jsonCollRank{}, Sizes: []jsonCollSize{},
			Run: o.Run, ProcessGroup: o.Group, GroupRanks: o.GroupRanks, UnmatchedNS: o.UnmatchedNS, StepKindNS: o.ClassNS,
			Share: o.Share, UpperBound: o.UpperBound, SizedInstances: o.SizedInstances, SizedTransfer: o.SizedTransferNS,
			AlgBW: o.AlgGBps, BusBW: o.BusGBps, LinkShare: o.LinkShare, Steps: o.Steps,
			ArgsGroupSize: o.ArgsGroupSize, SizeConflicts: o.SizeConflicts, UnusableArgs: o.UnusableArgs,
			Phase: o.Phase, Host: o.Host, Rules: []string{}, Scope: o.Scope.String(), OpLink: jsonLinkOf(o.Link), TokenInstances: o.TokenInstances}
		for _, r := range o.Rules {
			j.Rules = append(j.Rules, r.String())
		}
		if o.TokenInstances > 0 {
			v := o.TokenImbalance()
			j.TokenImbalance = &v
		}
		if o.SplitInstances > 0 {
			v := o.SplitImbalance()
			j.SplitInstances, j.SplitImbalance = o.SplitInstances, &v
		}
		for _, r := range o.Ranks {
			j.Ranks = append(j.Ranks, jsonCollRank{Rank: r.Number, Index: r.Index, Path: r.Path, PID: r.PID, KernelNS: r.KernelNS,
				TransferNS: r.TransferNS, WaitNS: r.WaitNS, LastArrivals: r.LastArrivals, jsonRankID: rankID(r.Rank)})
			if o.SplitInstances > 0 {
				j.Ranks[len(j.Ranks)-1].SplitCount = &r.SplitCount
			}
		}
		for _, s := range o.Sizes {
			js := jsonCollSize{Instances: s.Instances, TransferNS: s.TransferNS, AlgBW: s.AlgGBps, BusBW: s.BusGBps,
				LinkShare: s.LinkShare, Source: s.Source.String()}
			if s.Bytes >= 0 {
				b := s.Bytes
				js.Bytes = &b
			}
			j.Sizes = append(j.Sizes, js)
		}
		doc.Collectives = append(doc.Collectives, j)
	}
	return doc
}
