// Package interconnect is the link collectives are compared with, as the
// analyses that time collectives at it (collectives, efficiency) and the
// outputs name it: one small type below both, so a link is labelled and
// said to be given or assumed in one place.
package interconnect

import "strconv"

// Link is an interconnect's bandwidth per direction, named.
type Link struct {
	// Name is the link's name ("nvlink4"), or "" for a figure given as a
	// number.
	Name string
	// GBps is the bandwidth per direction in GB/s (10^9 bytes/s).
	GBps float64
	// About says what the figure is and where it comes from.
	About string
	// Device, when set, is the GPU table row whose default link this is
	// ("V100 SXM2"): no link was given, so the devices' was assumed
	// (docs/definitions.md#the-link). "" for a link given (--link).
	Device string
}

// Label names the link in a sentence: "nvlink4", or "40 GB/s".
func (l *Link) Label() string {
	if l.Name != "" {
		return l.Name
	}
	return strconv.FormatFloat(l.GBps, 'g', -1, 64) + " GB/s"
}

// Assumed reports whether the link was not given but taken from the
// devices' row of the GPU table.
func (l *Link) Assumed() bool { return l.Device != "" }
