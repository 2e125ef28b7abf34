package collectives

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/traceq/traceq/interconnect"
)

// Link is the interconnect bus bandwidth is compared with: a named link's
// theoretical per-direction bandwidth, or a figure the user measured
// (nccl-tests' busbw on the same machine, say).
type Link struct {
	// Link is the link's name, bandwidth per direction and what the
	// figure is; Device says when it was assumed from the GPU table.
	interconnect.Link
	// Source is the file a measured link was read from (ReadNCCLTests);
	// Curves what it measured, per collective. GBps is then the highest
	// busbw measured.
	Source string
	Curves []Curve
}

// Label names the link in a sentence: "pcie5", "40 GB/s", or for a
// measured link "nccl-tests (FILE)".
func (l *Link) Label() string {
	if l.Measured() {
		return "nccl-tests (" + filepath.Base(l.Source) + ")"
	}
	return l.Link.Label()
}

// links are the named links and their theoretical bandwidth per direction
// (one way, as nccl-tests' busbw is measured), from the specifications:
//
//   - PCIe x16: lanes × transfer rate × encoding. PCIe 4.0 16 GT/s and 5.0
//     32 GT/s with 128b/130b encoding: 31.5 and 63.0 GB/s (PCI-SIG, PCI
//     Express Base Specification 4.0 and 5.0). PCIe 6.0 64 GT/s PAM4 in
//     FLIT mode, no line encoding: 128 GB/s (PCI-SIG, PCIe 6.0
//     specification announcement: 256 GB/s bidirectional for x16).
//   - NVLink, per GPU, all links together, half the bidirectional figure
//     NVIDIA quotes: NVLink 2 (V100 SXM2, 6 links × 25 GB/s per
//     direction): 300 GB/s → 150 (NVIDIA Tesla V100 datasheet); NVLink 3 (A100, 12 links): 600 GB/s → 300; NVLink 4
//     (H100/H200, 18 links): 900 GB/s → 450; NVLink 5 (B200, 18 links):
//     1.8 TB/s → 900 (NVIDIA A100, H100/H200 and DGX B200 datasheets).
//
// Real collectives reach less: nccl-tests' all_reduce busbw is typically
// 70–85 % of these on NVLink and 80–90 % on PCIe.
var links = []Link{
	named("pcie4", 31.5, "PCIe 4.0 x16: 16 GT/s × 16 lanes × 128/130, per direction (PCI-SIG)"),
	named("pcie5", 63.0, "PCIe 5.0 x16: 32 GT/s × 16 lanes × 128/130, per direction (PCI-SIG)"),
	named("pcie6", 128.0, "PCIe 6.0 x16: 64 GT/s PAM4 FLIT × 16 lanes, per direction (PCI-SIG)"),
	named("nvlink2", 150.0, "NVLink 2 (V100 SXM2): 6 links × 25 GB/s per direction, 300 GB/s bidirectional per GPU (NVIDIA Tesla V100 datasheet)"),
	named("nvlink3", 300.0, "NVLink 3 (A100): 12 links, 600 GB/s bidirectional per GPU (NVIDIA A100 datasheet)"),
	named("nvlink4", 450.0, "NVLink 4 (H100/H200): 18 links, 900 GB/s bidirectional per GPU (NVIDIA H100 datasheet)"),
	named("nvlink5", 900.0, "NVLink 5 (B200): 18 links, 1.8 TB/s bidirectional per GPU (NVIDIA DGX B200 datasheet)"),
}

// named is a link of the tables.
func named(name string, gbps float64, about string) Link {
	return Link{Link: interconnect.Link{Name: name, GBps: gbps, About: about}}
}

// LinkNames lists the names Links knows, comma-separated.
func LinkNames() string { return nameList(links) }

// nameList is the links' names, comma-separated.
func nameList(ls []Link) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// A link's bandwidth in GB/s per direction is bounded: below 10 MB/s or
// above 100 TB/s it is a typo, and a share of it would print as a number
// of hundreds of digits.
const minLink, maxLink = 0.01, 100000

// ParseLink reads --link: a link name (pcie5, nvlink4, …, any case) or a
// number of GB/s per direction, from 0.01 to 100000.
func ParseLink(s string) (Link, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	for _, l := range links {
		if l.Name == low {
			return l, nil
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(low, "gb/s"), " "), 64)
	if err != nil || !(v >= minLink && v <= maxLink) {
		return Link{}, fmt.Errorf("unknown link %q: want a number of GB/s per direction, 0.01 to 100000 GB/s, or one of %s", s, LinkNames())
	}
	return Link{Link: interconnect.Link{GBps: v, About: "given bandwidth per direction"}}, nil
}
