package collectives

import (
	"fmt"
	"strings"
)

// netLinks are the links between hosts, per GPU and direction: the
// network adapter each GPU of a rail-optimised node has (a DGX H100 has
// eight ConnectX-7, one per GPU), at its data rate. InfiniBand and
// Ethernet data rates are per direction (full duplex).
//
//   - InfiniBand NDR 400 Gb/s and NDR200 (NVIDIA ConnectX-7 user manual:
//     "single-port NDR 400Gb/s", "NDR200 200Gb/s"); HDR 200 Gb/s and HDR100
//     (ConnectX-6 user manual); EDR 100 Gb/s (ConnectX-5/-4 user manuals);
//     XDR 800 Gb/s (ConnectX-8 SuperNIC datasheet).
//   - RoCE at 400, 200 and 100 GbE (IEEE 802.3bs, 802.3cd; the same
//     ConnectX-7 in Ethernet mode).
//
// 1 Gb/s = 0.125 GB/s. nccl-tests across nodes typically reach 85–95 %
// of these per GPU (busbw of an all-reduce over a rail-optimised fabric).
var netLinks = []Link{
	named("ib-xdr800", 100, "InfiniBand XDR, 800 Gb/s per port and direction (NVIDIA ConnectX-8 SuperNIC datasheet)"),
	named("ib-ndr400", 50, "InfiniBand NDR, 400 Gb/s per port and direction (NVIDIA ConnectX-7 user manual)"),
	named("ib-ndr200", 25, "InfiniBand NDR200, 200 Gb/s per port and direction (NVIDIA ConnectX-7 user manual)"),
	named("ib-hdr200", 25, "InfiniBand HDR, 200 Gb/s per port and direction (NVIDIA ConnectX-6 user manual)"),
	named("ib-hdr100", 12.5, "InfiniBand HDR100, 100 Gb/s per port and direction (NVIDIA ConnectX-6 user manual)"),
	named("ib-edr100", 12.5, "InfiniBand EDR, 100 Gb/s per port and direction (NVIDIA ConnectX-5 user manual)"),
	named("roce400", 50, "RoCE over 400 GbE, per port and direction (IEEE 802.3bs)"),
	named("roce200", 25, "RoCE over 200 GbE, per port and direction (IEEE 802.3bs)"),
	named("roce100", 12.5, "RoCE over 100 GbE, per port and direction (IEEE 802.3cd)"),
}

// NetLinkNames lists the names of the links between hosts,
// comma-separated.
func NetLinkNames() string { return nameList(netLinks) }

// Links are what --link gives: one link for every communicator (the
// NAME|GBPS form: All), or one for the communicators whose ranks are all
// on one host (Intra: NVLink, PCIe) and one for those that span hosts
// (Inter: InfiniBand, RoCE). A nil link is not given.
type Links struct {
	All          *Link
	Intra, Inter *Link
}

// Scope says which of the links bounds a communicator.
type Scope uint8

const (
	// ScopeAny: the hosts are not known, or one link is given for all.
	ScopeAny Scope = iota
	// ScopeIntra: every rank of the communicator on one host.
	ScopeIntra
	// ScopeInter: ranks on more than one host.
	ScopeInter
)

var scopeNames = [...]string{ScopeAny: "", ScopeIntra: "intra", ScopeInter: "inter"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("scope(%d)", s)
}

// For returns the link that bounds a communicator of scope s: the one
// link when one was given for all, else the intra-host link for a
// communicator on one host and the inter-host link for one that spans
// hosts; nil when none applies (a scope the links do not give, or hosts
// unknown with only per-scope links). A link assumed from the devices
// (Options.WithDefault) is theirs, never the network between hosts: it
// bounds no communicator that spans hosts.
func (l Links) For(s Scope) *Link {
	switch {
	case l.All != nil && l.All.Assumed() && s == ScopeInter:
		return nil
	case l.All != nil:
		return l.All
	case s == ScopeIntra:
		return l.Intra
	case s == ScopeInter:
		return l.Inter
	}
	return nil
}

// Given reports whether any link was given.
func (l Links) Given() bool { return l.All != nil || l.Intra != nil || l.Inter != nil }

// ParseLinks reads --link: "NAME|GBPS", one link for every communicator,
// read by parse (ParseLink: a node link's name or a number of GB/s); or
// "intra=SPEC,inter=SPEC", either part alone or both, each SPEC a node
// link, a network link (ib-ndr400, roce400, …: NetLinkNames) or what
// parse reads. A network link's name is taken in the first form too.
func ParseLinks(s string, parse func(string) (Link, error)) (Links, error) {
	one := func(spec string) (*Link, error) {
		low := strings.ToLower(strings.TrimSpace(spec))
		for _, l := range netLinks {
			if l.Name == low {
				l := l
				return &l, nil
			}
		}
		l, err := parse(spec)
		if err != nil {
			return nil, fmt.Errorf("%w (or, between hosts, one of %s)", err, NetLinkNames())
		}
		return &l, nil
	}
	if !strings.Contains(s, "=") {
		l, err := one(s)
		return Links{All: l}, err
	}
	var out Links
	for _, part := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(part, "=")
		var dst **Link
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "intra":
			dst = &out.Intra
		case "inter":
			dst = &out.Inter
		default:
			return Links{}, fmt.Errorf("%q: want intra=NAME|GBPS,inter=NAME|GBPS (or one NAME|GBPS for every communicator)", part)
		}
		if *dst != nil {
			return Links{}, fmt.Errorf("%q: %s given twice", s, strings.TrimSpace(k))
		}
		l, err := one(v)
		if err != nil {
			return Links{}, err
		}
		*dst = l
	}
	return out, nil
}
