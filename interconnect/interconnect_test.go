package interconnect

import "testing"

func TestLabel(t *testing.T) {
	for _, c := range []struct {
		l       Link
		label   string
		assumed bool
	}{
		{Link{Name: "nvlink2", GBps: 150}, "nvlink2", false},
		{Link{GBps: 40}, "40 GB/s", false},
		{Link{GBps: 12.5}, "12.5 GB/s", false},
		{Link{Name: "nvlink4", GBps: 450, Device: "H200"}, "nvlink4", true},
	} {
		if got := c.l.Label(); got != c.label || c.l.Assumed() != c.assumed {
			t.Errorf("%+v: label %q, assumed %v; want %q, %v", c.l, got, c.l.Assumed(), c.label, c.assumed)
		}
	}
}
