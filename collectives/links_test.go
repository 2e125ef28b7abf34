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

// TestWithDefault pins the rule of the link (docs/definitions.md#the-link):
// the link given, else the devices' default, assumed and named by its
// row, intra-host only.
func TestWithDefault(t *testing.T) {
	given := func(s string) Options {
		ls, err := ParseLinks(s, ParseLink)
		if err != nil {
			t.Fatal(err)
		}
		if ls.All != nil {
			return Options{Link: ls.All}
		}
		return Options{Links: ls}
	}
	for _, c := range []struct {
		name     string
		opt      Options
		def, dev string
		// The link For each scope gives: its GB/s (0: none) and whether
		// it is assumed.
		any, intra, inter float64
		assumed           bool
	}{
		{name: "none given: the default, on one host or unknown hosts", def: "nvlink2", dev: "V100 SXM2", any: 150, intra: 150, assumed: true},
		{name: "a default as a number", def: "448", dev: "MI300X", any: 448, intra: 448, assumed: true},
		{name: "given wins", opt: given("pcie5"), def: "nvlink4", dev: "H100 SXM", any: 63, intra: 63, inter: 63},
		{name: "inter given: the default is intra", opt: given("inter=ib-ndr400"), def: "nvlink4", dev: "H100 SXM", intra: 450, inter: 50, assumed: true},
		{name: "both given", opt: given("intra=pcie5,inter=ib-ndr400"), def: "nvlink4", dev: "H100 SXM", intra: 63, inter: 50},
		{name: "no default", def: "", dev: ""},
		{name: "a default no one reads", def: "warp9", dev: "X"},
	} {
		o := c.opt.WithDefault(c.def, c.dev)
		links := o.links()
		for _, sc := range []struct {
			s    Scope
			want float64
		}{{ScopeAny, c.any}, {ScopeIntra, c.intra}, {ScopeInter, c.inter}} {
			l := links.For(sc.s)
			switch {
			case sc.want == 0 && l != nil:
				t.Errorf("%s: %q link %s, want none", c.name, sc.s, l.Label())
			case sc.want != 0 && (l == nil || l.GBps != sc.want):
				t.Errorf("%s: %q link %+v, want %v GB/s", c.name, sc.s, l, sc.want)
			case l != nil && l.Assumed() != (c.assumed && sc.s != ScopeInter):
				t.Errorf("%s: %q link assumed from %q", c.name, sc.s, l.Device)
			case l != nil && l.Assumed() && l.Device != c.dev:
				t.Errorf("%s: %q link assumed from %q, want %q", c.name, sc.s, l.Device, c.dev)
			}
		}
	}
}
