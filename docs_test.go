package traceq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/traceq/traceq/internal/golden"
)

// The documentation's examples are tests. In README.md and docs/*.md a
// fenced block whose info string is "console" is run:
//
//	```console
//	$ traceq steps testdata/traces/torch/hta_ns_resolution.json.gz
//	== testdata/traces/torch/hta_ns_resolution.json.gz · 5 steps
//	…
//	```
//
// Each line starting with "$ " is a command (a line ending in a backslash
// continues it), run by sh in a fresh directory that holds a symlink
// "testdata" to the repository's testdata, with a traceq built from this
// tree first on PATH; "go run ./cmd/traceq" means that binary too. The
// lines up to the next command are its expected output: stdout and stderr
// together, in the order written, then "[exit N]" when the exit status is
// not 0. Commands of one block share the directory (a slice written by one
// is read by the next). To show part of a long output, trim it in the
// command (| head -n 20) so that what the reader sees is what runs.
//
// Any other fence, or an indented block, is an illustration and is not
// run; it must not contain "$ " prompts. Refresh the outputs after a deliberate change with
//
//	go test -run TestDocs -update .
//
// and review the diff like code.

// docFiles are the documents whose examples run.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// fence is one fenced block of a markdown file.
type fence struct {
	info       string // the info string's first word
	open, shut int    // line indexes of the fence lines
}

// example is one command of a console block and the output it shows.
type example struct {
	line int // of the "$ " line, counted from 1
	cmd  []string
	want []string
}

func fences(lines []string) ([]fence, error) {
	var out []fence
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			continue
		}
		if strings.HasPrefix(l, " ") && strings.HasPrefix(strings.TrimLeft(l, " "), "```console") {
			return nil, fmt.Errorf("line %d: an indented console block: start it at the margin", i+1)
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		marks := strings.TrimLeft(l, " ")
		ticks := len(marks) - len(strings.TrimLeft(marks, "`"))
		f := fence{info: strings.TrimSpace(strings.TrimLeft(marks, "`")), open: i, shut: -1}
		if w := strings.Fields(f.info); len(w) > 0 {
			f.info = w[0]
		}
		for j := i + 1; j < len(lines); j++ {
			m := lines[j]
			if len(m) >= indent && strings.TrimSpace(m[:indent]) == "" {
				m = m[indent:]
			}
			if strings.TrimRight(m, " ") == strings.Repeat("`", ticks) {
				f.shut = j
				break
			}
		}
		if f.shut < 0 {
			return nil, fmt.Errorf("line %d: fence never closed", i+1)
		}
		out = append(out, f)
		i = f.shut
	}
	return out, nil
}

func examples(lines []string, f fence) ([]example, error) {
	var out []example
	body := lines[f.open+1 : f.shut]
	for i := 0; i < len(body); i++ {
		l := body[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(out) == 0 {
				return nil, fmt.Errorf("line %d: a console block must start with a \"$ \" command", f.open+2+i)
			}
			out[len(out)-1].want = append(out[len(out)-1].want, l)
			continue
		}
		e := example{line: f.open + 2 + i, cmd: []string{l}}
		for strings.HasSuffix(l, `\`) && i+1 < len(body) {
			i++
			l = body[i]
			e.cmd = append(e.cmd, l)
		}
		out = append(out, e)
	}
	return out, nil
}

// script is the shell text of an example's command: "go run ./cmd/traceq"
// and "go run ./bench/gen" run the binaries built from the tree.
func (e example) script() string {
	s := strings.TrimPrefix(strings.Join(e.cmd, "\n"), "$ ")
	s = strings.ReplaceAll(s, "go run ./bench/gen ", "traceq-bench-gen ")
	return strings.ReplaceAll(s, "go run ./cmd/traceq ", "traceq ")
}

var traceqBin = struct {
	once sync.Once
	dir  string
	err  error
}{}

// buildTraceq builds ./cmd/traceq (and ./bench/gen, as traceq-bench-gen)
// once per test process and returns the directory that holds the
// binaries.
func buildTraceq(t *testing.T) string {
	t.Helper()
	traceqBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "traceq-docs-")
		if err != nil {
			traceqBin.err = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		for _, b := range []struct{ name, pkg string }{{"traceq", "./cmd/traceq"}, {"traceq-bench-gen", "./bench/gen"}} {
			out, err := exec.Command(goTool, "build", "-o", filepath.Join(dir, b.name), b.pkg).CombinedOutput()
			if err != nil {
				traceqBin.err = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
		traceqBin.dir = dir
	})
	if traceqBin.err != nil {
		t.Fatal(traceqBin.err)
	}
	return traceqBin.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if traceqBin.dir != "" {
		os.RemoveAll(traceqBin.dir)
	}
	os.Exit(code)
}

// run runs one example's command in dir and returns what it printed, with
// "[exit N]" appended for a non-zero status.
func run(t *testing.T, bin, dir string, e example) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", e.script())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TRACEQ_DATE=2026-11-30", "TZ=UTC", "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order of writes is kept
	err := cmd.Run()
	var got []string
	if out.Len() > 0 {
		got = strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = append(got, fmt.Sprintf("[exit %d]", exit.ExitCode()))
	case err != nil:
		t.Fatalf("line %d: %s: %v", e.line, e.script(), err)
	}
	return got
}

// TestDocs runs the console examples of the documentation and compares
// what they print with what the documents show (-update rewrites them).
func TestDocs(t *testing.T) {
	bin := buildTraceq(t)
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		fs, err := fences(lines)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		inFence := make([]bool, len(lines))
		for _, f := range fs {
			for i := f.open; i <= f.shut; i++ {
				inFence[i] = true
			}
		}
		for i, l := range lines {
			if !inFence[i] && strings.HasPrefix(l, "    ") && strings.HasPrefix(strings.TrimLeft(l, " "), "$ ") {
				t.Errorf("%s:%d: a \"$ \" prompt in an indented block: put the example in a ```console block (run by TestDocs) or drop the prompt (an illustration)", file, i+1)
			}
		}
		changed := false
		for fi := len(fs) - 1; fi >= 0; fi-- { // from the end, so that rewriting keeps earlier line numbers
			f := fs[fi]
			if f.info != "console" {
				for i := f.open + 1; i < f.shut; i++ {
					if strings.HasPrefix(strings.TrimLeft(lines[i], " "), "$ ") {
						t.Errorf("%s:%d: a \"$ \" prompt outside a console block: put the example in a ```console block (run by TestDocs) or drop the prompt (an illustration)", file, i+1)
					}
				}
				continue
			}
			exs, err := examples(lines, f)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			dir := t.TempDir()
			if err := os.Symlink(testdata, filepath.Join(dir, "testdata")); err != nil {
				t.Fatal(err)
			}
			var body []string
			for _, e := range exs {
				start := time.Now()
				got := run(t, bin, dir, e)
				if d := time.Since(start); d > 2*time.Second {
					t.Logf("%s:%d: %s took %v", file, e.line, e.script(), d.Round(time.Millisecond))
				}
				body = append(body, e.cmd...)
				body = append(body, got...)
				if !golden.Update() && strings.Join(got, "\n") != strings.Join(e.want, "\n") {
					t.Errorf("%s:%d: %s: the output differs from the document (go test -run TestDocs -update . to accept):\n%s",
						file, e.line, e.script(), golden.Diff(strings.Join(e.want, "\n")+"\n", strings.Join(got, "\n")+"\n"))
				}
			}
			if golden.Update() {
				old := strings.Join(lines[f.open+1:f.shut], "\n")
				if old != strings.Join(body, "\n") {
					lines = slices.Concat(lines[:f.open+1], body, lines[f.shut:])
					changed = true
				}
			}
		}
		if changed {
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", file)
		}
	}
}

// exampleDirs are the example reports docs/regen.sh writes.
var exampleDirs = []string{"example", "example-ranks", "example-steps", "example-bench"}

// TestExampleReports checks that the example reports under docs/ are what
// docs/regen.sh makes from this tree (-update regenerates them).
func TestExampleReports(t *testing.T) {
	bin := buildTraceq(t)
	root := t.TempDir()
	if golden.Update() {
		root = "docs"
	}
	cmd := exec.Command("sh", "docs/regen.sh", root)
	cmd.Env = append(os.Environ(), "TRACEQ="+filepath.Join(bin, "traceq"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh docs/regen.sh: %v\n%s", err, out)
	}
	if golden.Update() {
		return
	}
	for _, d := range exampleDirs {
		want := readDir(t, filepath.Join("docs", d))
		got := readDir(t, filepath.Join(root, d))
		for name, g := range got {
			w, ok := want[name]
			switch {
			case !ok:
				t.Errorf("docs/%s/%s: missing (sh docs/regen.sh, or go test -run TestExampleReports -update .)", d, name)
			case !bytes.Equal(g, w):
				t.Errorf("docs/%s/%s: stale (sh docs/regen.sh, or go test -run TestExampleReports -update .):\n%s",
					d, name, golden.Diff(string(w), string(g)))
			}
		}
		for name := range want {
			if _, ok := got[name]; !ok {
				t.Errorf("docs/%s/%s: no longer made by docs/regen.sh: remove it", d, name)
			}
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestCIRunsTheREADMETests checks the promise of the README's front door:
// .ci/run runs exactly the README's test command, plus go vet.
func TestCIRunsTheREADMETests(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	fs, err := fences(lines)
	if err != nil {
		t.Fatal(err)
	}
	var test []string // the first block after the line that introduces the tests
	for i, l := range lines {
		if !strings.Contains(l, "Run the tests") {
			continue
		}
		for _, f := range fs {
			if f.open > i {
				test = lines[f.open+1 : f.shut]
				break
			}
		}
		break
	}
	if len(test) != 1 {
		t.Fatalf("README.md: want one fenced line after \"Run the tests\", the test command; got %q", test)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var gos []string
	for _, l := range strings.Split(string(ci), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "go test") || strings.HasPrefix(l, "go vet") {
			gos = append(gos, l)
		}
	}
	if want := []string{"go vet ./...", test[0]}; !slices.Equal(gos, want) {
		t.Errorf(".ci/run runs %q; want %q: the README's test command and go vet, nothing else", gos, want)
	}
}

// TestJSONFieldsDocumented checks that every field of the JSON documents
// (the wire types in render/json.go and render's other *json*.go files)
// is listed in docs/json.md, the contract's description.
func TestJSONFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("render/*json*.go")
	if err != nil || len(files) < 2 {
		t.Fatalf("wire type files %v, %v", files, err)
	}
	n := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			field, ok := node.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				t.Fatal(err)
			}
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if name == "" || name == "-" {
				return true
			}
			n++
			if !bytes.Contains(doc, []byte("`"+name+"`")) && !bytes.Contains(doc, []byte(`"`+name+`"`)) {
				t.Errorf("%s field %q is not described in docs/json.md", file, name)
			}
			return true
		})
	}
	if n < 50 {
		t.Errorf("found %d JSON fields in render: the scan is broken", n)
	}
}

// TestDocLinks checks the links between the documents, and from comments
// in the code to them: the file exists, and so does the heading an anchor
// names (GitHub's anchors: lower case, punctuation dropped, spaces as -).
func TestDocLinks(t *testing.T) {
	anchors := map[string]map[string]bool{} // file -> anchors
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		if data, err := os.ReadFile(file); err == nil {
			lines := strings.Split(string(data), "\n")
			fs, _ := fences(lines)
			inFence := make([]bool, len(lines))
			for _, f := range fs {
				for i := f.open; i <= f.shut; i++ {
					inFence[i] = true
				}
			}
			for i, l := range lines {
				if inFence[i] || !strings.HasPrefix(l, "#") {
					continue
				}
				slug := githubSlug(strings.TrimSpace(strings.TrimLeft(l, "#")))
				for n := 0; ; n++ {
					s := slug
					if n > 0 {
						s = fmt.Sprintf("%s-%d", slug, n)
					}
					if !a[s] {
						a[s] = true
						break
					}
				}
			}
		} else {
			a = nil
		}
		anchors[file] = a
		return a
	}
	check := func(from, target string) {
		file, anchor, _ := strings.Cut(target, "#")
		path := from
		if file != "" {
			path = filepath.Join(filepath.Dir(from), file)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: link to %s: %v", from, target, err)
			return
		}
		if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
			t.Errorf("%s: link to %s: no heading with that anchor in %s", from, target, path)
		}
	}
	mdLink := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			if target := m[1]; !strings.Contains(target, "://") {
				check(file, target)
			}
		}
	}
	// Comments that send the reader to a document.
	goRef := regexp.MustCompile(`docs/[a-z-]+\.md(#[a-z0-9-]+)?`)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, ref := range goRef.FindAllString(string(data), -1) {
			check("README.md", ref) // resolved from the repository root
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// githubSlug is the anchor GitHub gives a markdown heading.
func githubSlug(heading string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			sb.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
