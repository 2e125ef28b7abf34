package classify

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/traceq/traceq/parse"
)

var update = flag.Bool("update", false, "rewrite testdata/kernels.golden from the current rules")

type labelled struct {
	raw   string // the name as the corpus (and the trace) spells it
	name  string // as a classifier sees it: demangled
	want  string // the corpus label, with communication mapped to the collective
	label string // the label as written in the corpus
}

// readLabelled reads testdata/labelled.tsv (name<TAB>category<TAB>source).
func readLabelled(t testing.TB) []labelled {
	t.Helper()
	f, err := os.Open("testdata/labelled.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 || line == "" || strings.HasPrefix(line, "#") {
			continue // header
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 2 {
			t.Fatalf("testdata/labelled.tsv:%d: want name<TAB>category<TAB>source, got %q", n, line)
		}
		// The corpus keeps ROCm's mangled names; a classifier sees them
		// demangled, as parse delivers them.
		name := parse.DemangleName(fields[0])
		out = append(out, labelled{raw: fields[0], name: name, label: fields[1], want: expected(name, fields[1])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 300 {
		t.Fatalf("testdata/labelled.tsv: %d rows, want the full corpus", len(out))
	}
	return out
}

// expected maps the corpus label to the classifier's contract. The corpus
// labels communication by library (communication/nccl, .../deepep); the
// classifier reports the collective, which this derives from the name
// independently of the rules.
func expected(name, label string) string {
	if !strings.HasPrefix(label, "communication/") {
		return label
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
	}
	return "communication/other" // ncclDevKernel_Reduce_*, ncclDevKernel_nop
}

func TestLabelled(t *testing.T) {
	rows := readLabelled(t)
	c := Default()
	exact, top := 0, 0
	for _, r := range rows {
		got := c.Classify(r.name).String()
		switch {
		case got == r.want:
			exact++
			top++
		case strings.Split(got, "/")[0] == strings.Split(r.want, "/")[0]:
			top++
			t.Logf("sub differs: Classify(%q) = %s, want %s", r.name, got, r.want)
		default:
			t.Logf("TOP differs: Classify(%q) = %s, want %s", r.name, got, r.want)
		}
	}
	n := len(rows)
	t.Logf("labelled.tsv: %d names, exact top/sub %d (%.1f%%), top %d (%.1f%%)",
		n, exact, 100*float64(exact)/float64(n), top, 100*float64(top)/float64(n))
	if float64(exact) < 0.97*float64(n) {
		t.Errorf("exact top/sub agreement %d/%d, want >= 97%%", exact, n)
	}
	if top != n {
		t.Errorf("top-level agreement %d/%d, want all", top, n)
	}
}

// TestGolden keeps testdata/kernels.golden (category<TAB>name for every
// labelled name) in step with the rules, so that a rule change shows up in
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
