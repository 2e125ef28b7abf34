package classify

import (
	"bufio"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/parse"
)

var update = flag.Bool("update", false, "rewrite testdata/kernels.golden from the current rules")

type labelled struct {
	raw    string // the name as the corpus (and the trace) spells it
	name   string // as a classifier sees it: demangled
	want   string // the corpus label, with communication mapped to the collective
	label  string // the label as written in the corpus
	source string // where the name comes from
	file   string // the corpus file it came from
}

// corpusFile is one labelled file of testdata/ and what TestLabelled asks
// of the classifier on it.
type corpusFile struct {
	name     string
	minRows  int
	minTop   float64 // share of names right at the top level
	minExact float64 // share right at top/sub
	// first is a held-out set's first measurement (testdata/README.md):
	// the names right at the top level and at top/sub against the rules
	// of the day it was collected, before any rule was written from it.
	// It is the honest held-out figure; the test holds the rules to it.
	first *measure
}

// measure counts the names a classifier got right.
type measure struct{ top, exact int }

// corpusFiles are the labelled names (testdata/README.md): the shared
// research corpus, the names added with the rules written from them, and
// the names held out while those rules were written (their top-level
// accuracy when first measured is in the README; the floor here keeps it).
var corpusFiles = []corpusFile{
	{name: "labelled.tsv", minRows: 300, minTop: 1, minExact: 0.97},
	{name: "corpus.tsv", minRows: 200, minTop: 0.94, minExact: 0.91},
	{name: "heldout.tsv", minRows: 290, minTop: 0.96, minExact: 0.88},
	{name: "heldout2.tsv", minRows: 110, minTop: 0.94, minExact: 0.83},
	{name: "heldout3.tsv", minRows: 330, minTop: 0.96, minExact: 0.91},
	{name: "heldout4.tsv", minRows: 300, minTop: 0.97, minExact: 0.91},
	{name: "heldout5.tsv", minRows: 182, minTop: 0.95, minExact: 0.87, first: &measure{top: 141, exact: 116}},
	{name: "heldout6.tsv", minRows: 66, minTop: 0.92, minExact: 0.75, first: &measure{top: 50, exact: 40}},
}

// readLabelled reads every corpus file, in corpusFiles order.
func readLabelled(t testing.TB) []labelled {
	t.Helper()
	var out []labelled
	for _, f := range corpusFiles {
		out = append(out, readCorpus(t, f)...)
	}
	return out
}

// readCorpus reads testdata/<f.name> (name<TAB>category<TAB>source, a
// header line first; lines starting with # are comments).
func readCorpus(t testing.TB, f corpusFile) []labelled {
	t.Helper()
	path := "testdata/" + f.name
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []labelled
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 || line == "" || strings.HasPrefix(line, "#") {
			continue // header
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 3 || fields[2] == "" {
			t.Fatalf("%s:%d: want name<TAB>category<TAB>source, got %q", path, n, line)
		}
		if _, err := ParseCategory(fields[1]); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		// The corpus keeps ROCm's mangled names; a classifier sees them
		// demangled, as parse delivers them.
		name := parse.DemangleName(fields[0])
		out = append(out, labelled{raw: fields[0], name: name, label: fields[1], want: expected(name, fields[1]), source: fields[2], file: f.name})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < f.minRows {
		t.Fatalf("%s: %d rows, want the full corpus (at least %d)", path, len(out), f.minRows)
	}
	return out
}

// expected maps the corpus label to the classifier's contract. The corpus
// labels communication by library (communication/nccl, .../deepep); the
// classifier reports the collective, which this derives from the name
// independently of the rules.
func expected(name, label string) string {
	if !strings.HasPrefix(label, "communication/") || collectiveSubs[strings.TrimPrefix(label, "communication/")] {
		return label // not communication, or labelled with the collective already
	}
	n := strings.ToLower(name)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("allreduce", "all_reduce", "cross_device_reduce", "quickreduce"):
		return "communication/allreduce"
	case has("allgather", "all_gather"):
		return "communication/allgather"
	case has("reducescatter", "reduce_scatter"):
		return "communication/reduce_scatter"
	case has("sendrecv"):
		return "communication/send_recv"
	case has("broadcast"):
		return "communication/broadcast"
	case has("deep_ep", "dispatchkernel", "combinekernel", "alltoall"):
		return "communication/all_to_all"
	case strings.HasPrefix(n, "nccl") && has("reduce"):
		return "communication/reduce" // ncclDevKernel_Reduce_*
	}
	return "communication/other" // ncclDevKernel_nop
}

// family groups a labelled name for the per-family figures of issue 19
// item 27 and issue 24: by its label's top level for communication (EP
// and all-to-all among it), sampling and MoE, by its source for FlagGems.
func family(r labelled) string {
	switch top := strings.Split(r.want, "/")[0]; {
	case top == "communication" || top == "sampling" || top == "moe":
		return top
	case strings.Contains(r.source, "FlagGems"):
		return "FlagGems (other tops)"
	}
	return "other"
}

// collectiveSubs are the communication subs that name a collective.
var collectiveSubs = map[string]bool{
	"allreduce": true, "allgather": true, "reduce_scatter": true, "all_to_all": true,
	"send_recv": true, "broadcast": true, "reduce": true, "other": true,
}

func TestLabelled(t *testing.T) {
	c := Default()
	for _, f := range corpusFiles {
		t.Run(f.name, func(t *testing.T) {
			rows := readCorpus(t, f)
			exact, top := 0, 0
			type tally struct{ n, top, exact int }
			// families are issue 19's and 24's groups; tops the label's top level.
			families, tops := map[string]*tally{}, map[string]*tally{}
			count := func(m map[string]*tally, k string) *tally {
				if m[k] == nil {
					m[k] = &tally{}
				}
				m[k].n++
				return m[k]
			}
			for _, r := range rows {
				got := c.Classify(r.name).String()
				fam, lt := count(families, family(r)), count(tops, strings.Split(r.want, "/")[0])
				switch {
				case got == r.want:
					exact++
					top++
					fam.exact++
					fam.top++
					lt.exact++
					lt.top++
				case strings.Split(got, "/")[0] == strings.Split(r.want, "/")[0]:
					top++
					fam.top++
					lt.top++
					t.Logf("sub differs: Classify(%q) = %s, want %s", r.name, got, r.want)
				default:
					t.Logf("TOP differs: Classify(%q) = %s, want %s", r.name, got, r.want)
				}
			}
			n := len(rows)
			t.Logf("%s: %d names, exact top/sub %d (%.1f%%), top %d (%.1f%%)",
				f.name, n, exact, 100*float64(exact)/float64(n), top, 100*float64(top)/float64(n))
			for i, m := range []map[string]*tally{families, tops} {
				if i == 1 {
					t.Logf("  by the label's top level:")
				}
				for _, k := range slices.Sorted(maps.Keys(m)) {
					a := m[k]
					t.Logf("  %-28s %4d names, top %4d (%5.1f%%), top/sub %4d (%5.1f%%)",
						k, a.n, a.top, 100*float64(a.top)/float64(a.n), a.exact, 100*float64(a.exact)/float64(a.n))
				}
			}
			if f.first != nil {
				t.Logf("  first measurement: top %d (%.1f%%), top/sub %d (%.1f%%)",
					f.first.top, 100*float64(f.first.top)/float64(n), f.first.exact, 100*float64(f.first.exact)/float64(n))
				if top < f.first.top || exact < f.first.exact {
					t.Errorf("below the first measurement: top %d, top/sub %d, first %d, %d", top, exact, f.first.top, f.first.exact)
				}
			}
			if float64(exact) < f.minExact*float64(n) {
				t.Errorf("exact top/sub agreement %d/%d, want >= %.0f%%", exact, n, 100*f.minExact)
			}
			if float64(top) < f.minTop*float64(n) {
				t.Errorf("top-level agreement %d/%d, want >= %.0f%%", top, n, 100*f.minTop)
			}
		})
	}
}

// TestGolden keeps testdata/kernels.golden (category<TAB>name for every
// name of every corpus file, in corpusFiles order) in step with the rules, so that a rule change shows up in
// review as a diff of reclassified kernels. Refresh with -update.
func TestGolden(t *testing.T) {
	var b strings.Builder
	c := Default()
	for _, r := range readLabelled(t) {
		fmt.Fprintf(&b, "%s\t%s\n", c.Classify(r.name), r.raw)
	}
	const path = "testdata/kernels.golden"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./classify -run TestGolden -update)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("%s:%d:\n got %s\nwant %s", path, i+1, g, w)
			}
		}
		t.Errorf("classifications differ from %s; if intended, rerun with -update", path)
	}
}
