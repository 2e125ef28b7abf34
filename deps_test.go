package traceq_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/traceq/traceq/"

// layers lists, for each package, the traceq packages it may import. Data
// flows one way: parse → trace → classify → step → window → the analyses
// (analyze, collectives) → render → cmd, with the loader (load) gathering
// parse, step and window for the command; docs/design.md draws it. Every
// package of the module is listed: a new one fails the test until it is
// placed on a floor.
var layers = map[string][]string{
	// The bottom floor: the model and its helpers, standard library only.
	"trace":   {},
	"outfile": {},
	"stats":   {},
	"labels":  {},
	// The link collectives are timed at, named: below the two analyses
	// that time them (collectives, efficiency), which may not import
	// each other.
	"interconnect": {},

	"classify":          {"trace"},
	"parse/chrometrace": {"trace"},
	"parse/nsyssqlite":  {"trace"},
	"parse":             {"trace", "outfile", "parse/chrometrace", "parse/nsyssqlite"},

	// The analysis floors: steps, the window table, the analyses reading
	// it. Sibling analyses do not import each other; their caller joins
	// them (a straggler on a cross-rank row is render's join).
	"step":        {"trace"},
	"window":      {"trace", "classify", "step"},
	"analyze":     {"trace", "classify", "stats", "labels", "step", "window"},
	"collectives": {"trace", "classify", "stats", "step", "window", "interconnect"},
	// The efficiency analysis and what it prices with: the GPU table and
	// the op models.
	"gpuspec":    {"trace"},
	"opcost":     {"gpuspec"},
	"efficiency": {"trace", "classify", "stats", "step", "window", "gpuspec", "opcost", "interconnect"},

	// Findings join the analyses: what to fix first, and its size.
	"findings": {"trace", "classify", "stats", "step", "window", "analyze", "collectives"},

	// The deployment's settings (--link, --bytes-per-token, --gpu given
	// once: the environment, traceq.toml), for the command.
	"settings": {},

	// The loader: arguments to the table, for the command, bench/prof and
	// the tests.
	"load": {"trace", "classify", "parse", "step", "window"},

	"render":         {"trace", "classify", "stats", "labels", "step", "window", "analyze", "collectives", "interconnect", "gpuspec", "opcost", "efficiency", "findings", "settings"},
	"render/chart":   {"trace", "classify", "stats", "labels", "step", "window", "analyze", "collectives", "gpuspec", "opcost", "efficiency", "findings", "render"},
	"render/report":  {"trace", "classify", "stats", "labels", "step", "window", "analyze", "collectives", "gpuspec", "opcost", "efficiency", "findings", "settings", "render", "render/chart"},
	"render/parquet": {"trace", "classify", "step", "window", "analyze", "render"},
	"slice":          {"trace", "parse", "parse/chrometrace", "parse/nsyssqlite", "step"},
	// merge: the ranks of a run as one Chrome trace, each rank read
	// through the loader, then streamed through slice.
	"merge": {"trace", "outfile", "classify", "parse", "parse/chrometrace", "step", "window", "collectives", "load", "slice"},

	// The command and the tools on top.
	"cmd/traceq": {"trace", "classify", "outfile", "parse", "parse/nsyssqlite", "step", "window", "analyze", "collectives",
		"gpuspec", "efficiency", "findings", "settings", "load", "render", "render/chart", "render/report", "render/parquet", "slice", "merge"},
	"bench/prof": {"parse", "load", "window", "analyze", "merge", "slice"},
}

// bottom are the packages that import the standard library only.
var bottom = []string{"trace", "outfile", "stats", "labels", "interconnect"}

// thirdParty names the one package allowed to import each dependency, so
// a reader sees what a package costs from its path (pprof's readline rule).
var thirdParty = map[string][]string{
	"github.com/tidwall/gjson":             {"parse/chrometrace"},
	"github.com/klauspost/compress":        {"parse/chrometrace"},
	"github.com/mattn/go-sqlite3":          {"parse/nsyssqlite"},
	"github.com/ianlancetaylor/demangle":   {"parse"},
	"github.com/urfave/cli/v2":             {"cmd/traceq"},
	"gonum.org/v1/plot":                    {"render/chart"},
	"github.com/parquet-go/parquet-go":     {"render/parquet"},
	"github.com/rogpeppe/go-internal/diff": {"internal/golden"},
	"github.com/BurntSushi/toml":           {"settings"},
	"golang.org/x/sys":                     {"parse"}, // mapping a file (parse/mapped.go)
}

func TestImportRules(t *testing.T) {
	fset := token.NewFileSet()
	imports := map[string]map[string]bool{} // package dir -> imports
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imports[dir][p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"trace", "classify", "parse/chrometrace", "step", "window", "analyze", "collectives", "gpuspec", "opcost", "efficiency", "findings", "settings", "load", "render", "cmd/traceq"} {
		if imports[must] == nil {
			t.Errorf("package %s not found: the walk is broken", must)
		}
	}
	for dir, ims := range imports {
		for im := range ims {
			if strings.HasPrefix(im, module) {
				dep := strings.TrimPrefix(im, module)
				if dep == "cmd/traceq" || strings.HasPrefix(dep, "cmd/") || strings.HasPrefix(dep, "bench/") {
					t.Errorf("%s imports %s: nothing may import a command (see deps_test.go)", dir, dep)
				}
				allowed, ok := layers[dir]
				if !ok {
					if !strings.HasPrefix(dir, "internal/") && !strings.HasPrefix(dir, "bench/") {
						t.Errorf("%s: a package not placed on a floor: add it to layers in deps_test.go and to docs/design.md", dir)
					}
					continue // internal test support, bench generators
				}
				if !contains(allowed, dep) && !strings.HasPrefix(dep, "internal/") {
					t.Errorf("%s imports %s: not allowed, imports point down parse → trace → classify → step → window → analyses → render (see deps_test.go)", dir, dep)
				}
				if strings.HasPrefix(dep, "internal/") && !strings.HasPrefix(dir, "internal/") {
					t.Errorf("%s imports %s: internal packages are test and tool support only", dir, dep)
				}
				continue
			}
			if contains(bottom, dir) && strings.Contains(strings.SplitN(im, "/", 2)[0], ".") {
				t.Errorf("%s imports %s: the bottom floor imports the standard library only", dir, im)
			}
			owned := false
			for dep, owners := range thirdParty {
				if im == dep || strings.HasPrefix(im, dep+"/") {
					owned = true
					if !contains(owners, dir) && !strings.HasPrefix(dir, "bench") && !strings.HasPrefix(dir, "internal/") {
						t.Errorf("%s imports %s: only %v may (see deps_test.go)", dir, im, owners)
					}
				}
			}
			if !owned && strings.Contains(strings.SplitN(im, "/", 2)[0], ".") {
				t.Errorf("%s imports %s, which has no owner in thirdParty (deps_test.go)", dir, im)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
