package collectives

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Link is the interconnect bus bandwidth is compared with: a named link's
// theoretical per-direction bandwidth, or a figure the user measured
// (nccl-tests' busbw on the same machine, say).
type Link struct {
	// Name is the link's name ("pcie5"), or "" for a figure given as a
	// number.
	Name string
	// GBps is the bandwidth per direction in GB/s (10^9 bytes/s).
	GBps float64
	// About says what the figure is and where it comes from.
	About string
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
	if l.Name != "" {
		return l.Name
	}
	return strconv.FormatFloat(l.GBps, 'g', -1, 64) + " GB/s"
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
//     NVIDIA quotes: NVLink 3 (A100, 12 links): 600 GB/s → 300; NVLink 4
//     (H100/H200, 18 links): 900 GB/s → 450; NVLink 5 (B200, 18 links):
//     1.8 TB/s → 900 (NVIDIA A100, H100/H200 and DGX B200 datasheets).
//
// Real collectives reach less: nccl-tests' all_reduce busbw is typically
// 70–85 % of these on NVLink and 80–90 % on PCIe.
var links = []Link{
	{Name: "pcie4", GBps: 31.5, About: "PCIe 4.0 x16: 16 GT/s × 16 lanes × 128/130, per direction (PCI-SIG)"},
	{Name: "pcie5", GBps: 63.0, About: "PCIe 5.0 x16: 32 GT/s × 16 lanes × 128/130, per direction (PCI-SIG)"},
	{Name: "pcie6", GBps: 128.0, About: "PCIe 6.0 x16: 64 GT/s PAM4 FLIT × 16 lanes, per direction (PCI-SIG)"},
	{Name: "nvlink3", GBps: 300.0, About: "NVLink 3 (A100): 12 links, 600 GB/s bidirectional per GPU (NVIDIA A100 datasheet)"},
	{Name: "nvlink4", GBps: 450.0, About: "NVLink 4 (H100/H200): 18 links, 900 GB/s bidirectional per GPU (NVIDIA H100 datasheet)"},
	{Name: "nvlink5", GBps: 900.0, About: "NVLink 5 (B200): 18 links, 1.8 TB/s bidirectional per GPU (NVIDIA DGX B200 datasheet)"},
}

// LinkNames lists the names Links knows, comma-separated.
func LinkNames() string {
	names := make([]string, len(links))
	for i, l := range links {
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
	return Link{GBps: v, About: "given bandwidth per direction"}, nil
}
