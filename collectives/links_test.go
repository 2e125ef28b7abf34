package collectives

import (
	"strings"
	"testing"
)

func TestParseLinks(t *testing.T) {
	for _, c := range []struct {
		in                string
		all, intra, inter float64 // 0: nil
		err               string
	}{
		{in: "pcie5", all: 63},
		{in: "40", all: 40},
		{in: "ib-ndr400", all: 50},
		{in: "intra=nvlink4,inter=ib-ndr400", intra: 450, inter: 50},
		{in: "INTER=roce400, intra = 120", intra: 120, inter: 50},
		{in: "intra=nvlink5", intra: 900},
		{in: "inter=ib-hdr200", inter: 25},
		{in: "inter=12.5", inter: 12.5},
		{in: "intra=nvlink4,intra=pcie5", err: "given twice"},
		{in: "intra=nvlink4,across=ib-ndr400", err: "want intra=NAME|GBPS,inter=NAME|GBPS"},
		{in: "inter=ib-ndr401", err: "ib-ndr400"},
		{in: "fast", err: "unknown link"},
	} {
		l, err := ParseLinks(c.in, ParseLink)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		gb := func(p *Link) float64 {
			if p == nil {
				return 0
			}
			return p.GBps
		}
		if gb(l.All) != c.all || gb(l.Intra) != c.intra || gb(l.Inter) != c.inter {
			t.Errorf("%q: all %v intra %v inter %v", c.in, gb(l.All), gb(l.Intra), gb(l.Inter))
		}
	}
	l, _ := ParseLinks("intra=nvlink4,inter=ib-ndr400", ParseLink)
	if l.For(ScopeIntra).Name != "nvlink4" || l.For(ScopeInter).Name != "ib-ndr400" || l.For(ScopeAny) != nil {
		t.Errorf("For: %v %v %v", l.For(ScopeIntra), l.For(ScopeInter), l.For(ScopeAny))
	}
	one, _ := ParseLinks("pcie5", ParseLink)
	if one.For(ScopeInter).Name != "pcie5" || one.For(ScopeAny).Name != "pcie5" {
		t.Error("one link bounds every communicator")
	}
	// The network links' figures: Gb/s over 8.
	for _, n := range netLinks {
		if n.About == "" || n.GBps <= 0 || !strings.Contains(n.About, "Gb") && !strings.Contains(n.About, "GbE") {
			t.Errorf("%s: %+v", n.Name, n)
		}
	}
}
