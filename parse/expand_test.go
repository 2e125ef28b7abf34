package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// write makes dir/name with content b.
func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExpandDirectory: a directory stands for its traces, sorted; what
// else it holds is skipped, each with its reason; a JSON file is judged
// by its first bytes, and what cannot be told from them is read.
func TestExpandDirectory(t *testing.T) {
	dir := t.TempDir()
	event := `{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}`
	bigMeta := `{"deviceProperties": "` + strings.Repeat("x", sniffSize) + `", "traceEvents": []}`
	for name, content := range map[string]string{
		"rank0.json":             `{"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": [` + event + `]}`,
		"truth.json":             `{"kernel_ms": 1.5, "steps": [1, 2]}`,
		"execution_details.json": `[{"file": "a.json.gz", "batch_size": 32, "mode": "FULL"}]`,
		"numbers.json":           `[1, 2, 3]`,
		"empty-array.json":       ` [ ] `,
		"array.json":             `[` + event + `]`,
		"later-event.json":       `[{"name": "meta"}, ` + event + `]`,
		"cut.json":               `{"schemaVersion": 1, "trace`,
		"broken.json":            `{"a": 1 "traceEvents": []}`,
		"empty.json":             ``,
		"big-metadata.json":      bigMeta,
		"html.json":              `<html>404</html>`,
		"README.md":              "# runs\n",
		"run.nsys-rep":           "\x00\x01",
		"export.sqlite":          "SQLite format 3\x00",
	} {
		write(t, dir, name, []byte(content))
	}
	gzipFile(t, dir, "rank1.json.gz", []byte(`{"traceEvents": [`+event+`]}`))
	gzipFile(t, dir, "settings.json.gz", []byte(`{"lr": 0.1}`))
	gzipFile(t, dir, "export.sqlite.gz", []byte("SQLite format 3\x00"))
	// vLLM's graph-capture traces beside the ranks: traces, but not ranks.
	os.Mkdir(filepath.Join(dir, "capture_traces"), 0o755)
	write(t, filepath.Join(dir, "capture_traces"), "graph_capture_rank_0.json", []byte(`{"traceEvents": [`+event+`]}`))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("rank0.json", filepath.Join(dir, "link.json"))

	in, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range in.Files() {
		files = append(files, filepath.Base(f))
	}
	wantFiles := []string{"array.json", "big-metadata.json", "broken.json", "cut.json", "empty.json",
		"export.sqlite", "export.sqlite.gz", "later-event.json", "link.json", "rank1.json.gz"}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("files %q\nwant  %q", files, wantFiles)
	}
	var skipped []string
	for _, s := range in.Skipped {
		skipped = append(skipped, strings.TrimPrefix(s.String(), dir+"/"))
	}
	wantSkipped := []string{
		"README.md: skipped: not a trace (named neither *.json, *.json.gz, *.sqlite nor *.sqlite.gz)",
		"capture_traces: skipped: graph-capture traces, not ranks (traceq efficiency reads them)",
		"empty-array.json: skipped: not a trace (a JSON array without events (objects with a ph))",
		"execution_details.json: skipped: not a trace (a JSON array without events (objects with a ph))",
		"html.json: skipped: not a trace (neither JSON, gzip nor SQLite)",
		"numbers.json: skipped: not a trace (a JSON array without events (objects with a ph))",
		"pipe.json: skipped: not a regular file (a FIFO)",
		"run.nsys-rep: skipped: an nsys report file: export it first with 'nsys export --type sqlite FILE'",
		"settings.json.gz: skipped: not a trace (a JSON object without traceEvents)",
		"truth.json: skipped: not a trace (a JSON object without traceEvents)",
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(wantSkipped, "\n"))
	}
	// link.json is rank0.json: read once, under the name that sorts first.
	want := []Repeat{{Path: filepath.Join(dir, "rank0.json"), First: filepath.Join(dir, "link.json")}}
	if !reflect.DeepEqual(in.Repeats, want) {
		t.Errorf("repeats %+v, want %+v", in.Repeats, want)
	}
}

// TestExpandGroups: one Arg per argument, in order, so that a caller can
// make a run of each directory; a file argument is its own group.
func TestExpandGroups(t *testing.T) {
	root := t.TempDir()
	// Traces of the same size, each its own bytes (copies are read once).
	trace := func(n int) []byte { return []byte(fmt.Sprintf(`{"traceEvents": [], "n": %d}`, n)) }
	a, b := filepath.Join(root, "runA"), filepath.Join(root, "runB")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	for i, d := range []string{a, b} {
		write(t, d, "rank1.json", trace(2*i))
		write(t, d, "rank0.json", trace(2*i+1))
	}
	single := write(t, root, "single.json", trace(5))
	in, err := Expand([]string{a, single, b, Stdin})
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{
		{Arg: a, Dir: true, Files: []string{a + "/rank0.json", a + "/rank1.json"}, Subdirs: []string{"", ""}},
		{Arg: single, Files: []string{single}},
		{Arg: b, Dir: true, Files: []string{b + "/rank0.json", b + "/rank1.json"}, Subdirs: []string{"", ""}},
		{Arg: Stdin, Files: []string{Stdin}},
	}
	if !reflect.DeepEqual(in.Args, want) {
		t.Errorf("args %+v\nwant %+v", in.Args, want)
	}
	if len(in.Skipped)+len(in.Repeats) != 0 {
		t.Errorf("skipped %v, repeats %v: want none", in.Skipped, in.Repeats)
	}
}

// TestExpandRepeats: a file given twice, under any spelling, is read once;
// each later spelling is reported with the first.
func TestExpandRepeats(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "run")
	os.Mkdir(d, 0o755)
	r0 := write(t, d, "rank0.json", []byte(`{"traceEvents": [0]}`))
	write(t, d, "rank1.json", []byte(`{"traceEvents": [1]}`)) // same size, other bytes
	r1 := d + "/../run/rank1.json"
	hard := filepath.Join(root, "hard.json")
	if err := os.Link(r0, hard); err != nil {
		t.Skip(err)
	}
	sym := filepath.Join(root, "sym")
	os.Symlink("run", sym)
	in, err := Expand([]string{r1, d, hard, sym + "/", d + "/./rank0.json", Stdin, Stdin})
	if err != nil {
		t.Fatal(err)
	}
	wantArgs := []Arg{
		{Arg: r1, Files: []string{r1}},
		{Arg: d, Dir: true, Files: []string{r0}, Subdirs: []string{""}},
		{Arg: hard},
		{Arg: sym + "/", Dir: true},
		{Arg: d + "/./rank0.json"},
		{Arg: Stdin, Files: []string{Stdin}},
		{Arg: Stdin},
	}
	if !reflect.DeepEqual(in.Args, wantArgs) {
		t.Errorf("args %+v\nwant %+v", in.Args, wantArgs)
	}
	wantRepeats := []Repeat{
		{Path: filepath.Join(d, "rank1.json"), First: r1},
		{Path: hard, First: r0},
		{Path: sym + "/", First: d},
		{Path: d + "/./rank0.json", First: r0},
		{Path: Stdin, First: Stdin},
	}
	if !reflect.DeepEqual(in.Repeats, wantRepeats) {
		t.Errorf("repeats %+v\nwant %+v", in.Repeats, wantRepeats)
	}
	if got, want := in.Repeats[1].String(), "warning: "+hard+" is the same file as "+r0+": read once"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got, want := in.Repeats[4].String(), "warning: standard input is given twice: read once"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestExpandCopies (issue 19 item 9): a file of a directory holding the
// same bytes as one of the directory read before is read once, in any
// subdirectory; files of the same size that differ anywhere, even in
// their last byte past the first chunk, are both read; copies in other
// arguments are other runs' files, read.
func TestExpandCopies(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "run")
	os.MkdirAll(filepath.Join(d, "node1"), 0o755)
	big := append(append([]byte(`{"traceEvents": [], "pad": "`), bytes.Repeat([]byte("x"), 200<<10)...), `", "n": 1}`...)
	other := slices.Clone(big)
	other[len(other)-2] = '2'
	a := write(t, d, "rank0.json", big)
	b := write(t, d, "rank1.json", other)
	c := write(t, filepath.Join(d, "node1"), "rank2.json", big)
	loose := write(t, root, "loose.json", big)
	in, err := Expand([]string{d, loose})
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Files(); !slices.Equal(got, []string{c, b, loose}) {
		t.Errorf("files %v", got)
	}
	want := []Repeat{{Path: a, First: c, Copy: true}}
	if !reflect.DeepEqual(in.Repeats, want) {
		t.Fatalf("repeats %+v, want %+v", in.Repeats, want)
	}
	if got, want := in.Repeats[0].String(), "warning: "+a+" holds the same bytes as "+c+": read once"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestExpandReportsEveryUnreadable: every argument and directory entry
// that cannot be read is reported, each as a *FileError, not only the
// first.
func TestExpandReportsEveryUnreadable(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "run")
	os.Mkdir(d, 0o755)
	write(t, d, "rank0.json", []byte(`{"traceEvents": []}`))
	os.Symlink("gone.json", filepath.Join(d, "rank1.json"))
	os.Symlink("loop.json", filepath.Join(d, "loop.json"))
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	notDir := write(t, root, "file", nil)
	missing := filepath.Join(root, "missing.json")
	_, err := Expand([]string{missing, d, filepath.Join(notDir, "x.json"), empty})
	if err == nil {
		t.Fatal("no error")
	}
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FileError
		if !errors.As(e, &fe) {
			t.Errorf("%v (%T) is not a *FileError", e, e)
		}
		got = append(got, strings.TrimPrefix(e.Error(), root+"/"))
	}
	want := []string{
		"missing.json: no such file or directory",
		"run/loop.json: too many levels of symbolic links",
		"run/rank1.json: no such file or directory",
		"file/x.json: not a directory",
		"empty: directory holds no trace files (*.json, *.json.gz, *.sqlite)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is(err, fs.ErrNotExist) = false")
	}
}

// TestNotTrace covers the sniffing of content alone.
func TestNotTrace(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"traceEvents": [`, ""},
		{"\ufeff  {\"traceEvents\": []}", ""},
		{`{"schemaVersion": 1, "deviceProperties": [{"id": 0, "x": {"y": [1, {}]}}], "traceEvents": [`, ""},
		{`{"a": {"traceEvents": []}}`, "a JSON object without traceEvents"},
		{`{"a": "traceEvents"}`, "a JSON object without traceEvents"},
		{`{}`, "a JSON object without traceEvents"},
		{`{"a": [1, 2`, ""},   // cut: cannot tell
		{`{"a": 1,, }`, ""},   // broken: the parser says how
		{`[{"ph": "X"}]`, ""}, // JSON array format
		{`[{"name": "x"}, {"ph": "X"}]`, ""},
		{`[{"name": "x"}, [], "s", {"ph"`, ""},
		{`[{"name": "x"}]`, "a JSON array without events (objects with a ph)"},
		{`[[{"ph": "X"}]]`, "a JSON array without events (objects with a ph)"},
		{`[]`, "a JSON array without events (objects with a ph)"},
		{`"traceEvents"`, "neither JSON, gzip nor SQLite"},
		{"SQLite format 3\x00", ""},
		{"  \n", ""},
	}
	for _, tc := range tests {
		if got := notTrace([]byte(tc.in)); got != tc.want {
			t.Errorf("notTrace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExpandNested: a run spread over node directories is one argument's
// files, each with the subdirectory it is in; a subdirectory without
// traces is one skipped line, whatever it holds; a symlink back up the
// tree is read once.
func TestExpandNested(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "runA")
	trace := []byte(`{"traceEvents": []}`)
	for _, d := range []string{"node0", "node1", "node1/gpu", "charts"} {
		os.MkdirAll(filepath.Join(run, d), 0o755)
	}
	write(t, filepath.Join(run, "node1"), "rank2.json", trace)
	write(t, filepath.Join(run, "node0"), "rank0.json", []byte(`{"traceEvents": [] }`))
	write(t, filepath.Join(run, "node1/gpu"), "rank3.json", []byte(`{"traceEvents": []  }`))
	write(t, run, "rank9.json", []byte(`{"traceEvents": []   }`))
	write(t, filepath.Join(run, "charts"), "shares.svg", []byte("<svg/>"))
	os.Symlink("..", filepath.Join(run, "node0", "up"))
	in, err := Expand([]string{run})
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{{Arg: run, Dir: true,
		Files:   []string{run + "/node0/rank0.json", run + "/node1/gpu/rank3.json", run + "/node1/rank2.json", run + "/rank9.json"},
		Subdirs: []string{"node0", "node1/gpu", "node1", ""}}}
	if !reflect.DeepEqual(in.Args, want) {
		t.Errorf("args %+v\nwant %+v", in.Args, want)
	}
	var skipped []string
	for _, s := range in.Skipped {
		skipped = append(skipped, strings.TrimPrefix(s.String(), run+"/"))
	}
	if want := []string{"charts: skipped: a directory without trace files"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
	if len(in.Repeats) != 1 || in.Repeats[0].Path != run+"/node0/up" || in.Repeats[0].First != run {
		t.Errorf("repeats %+v: want node0/up, the run itself, read once", in.Repeats)
	}
}
