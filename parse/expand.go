package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Inputs is what the input arguments of a command line stand for.
type Inputs struct {
	// Args holds one entry per argument, in order.
	Args []Arg
	// Skipped lists the files found in directories that are not read.
	Skipped []Skipped
	// Repeats lists the spellings of a file (or directory) given before
	// under another spelling: each file is read once, under its first.
	Repeats []Repeat
}

// Arg is one input argument and the trace files it stands for.
type Arg struct {
	Arg string // as given
	// Dir says Arg is a directory: Files are the trace files in it and in
	// its subdirectories, sorted by path (a directory of rank files, or of
	// node directories of rank files, is a rank set).
	Dir bool
	// Files is Arg itself for a file argument. Files given before under
	// another spelling are left out, so it may be empty.
	Files []string
	// Subdirs holds, for a directory, the subdirectory of Arg each file
	// is in ("node0", "" directly in Arg), in the order of Files.
	Subdirs []string
}

// Skipped is a file in a directory argument that is not read.
type Skipped struct {
	Path   string
	Reason string // "not a trace (a JSON object without traceEvents)"
}

// String is the message: "DIR/x.json: skipped: not a trace (…)".
func (s Skipped) String() string { return DisplayName(s.Path) + ": skipped: " + s.Reason }

// Repeat is a file (or directory) given again under another spelling
// (the same device and inode: a symlink, a hard link, the file given
// directly and through its directory), or a copy of one: another file
// with the same bytes.
type Repeat struct {
	Path  string // the spelling not read
	First string // the spelling read
	Copy  bool   // another file, with the same content
}

// String is the message: "warning: B is the same file as A: read once".
func (r Repeat) String() string {
	switch {
	case r.Copy:
		return fmt.Sprintf("warning: %s holds the same bytes as %s: read once", DisplayName(r.Path), DisplayName(r.First))
	case r.Path == r.First:
		return fmt.Sprintf("warning: %s is given twice: read once", DisplayName(r.Path))
	}
	return fmt.Sprintf("warning: %s is the same file as %s: read once", DisplayName(r.Path), DisplayName(r.First))
}

// Files returns every file to read, in order.
func (in *Inputs) Files() []string {
	var out []string
	for _, a := range in.Args {
		out = append(out, a.Files...)
	}
	return out
}

// traceSuffixes are the names a file in a directory must have to be read.
var traceSuffixes = []string{".json", ".json.gz", ".sqlite", ".sqlite.gz"}

// Expand turns the command-line input arguments into the files to read.
// A directory stands for the trace files inside it and inside its
// subdirectories (a run spread over node directories); what else it holds
// (other names, FIFOs, JSON that is not a trace, subdirectories without
// trace files) is listed in Skipped. A file argument stands for itself whatever it holds,
// so that reading it reports what is wrong; Stdin stands for standard
// input. Every file that cannot be read is reported, each as a
// *FileError, joined into one error (errors.Join).
func Expand(args []string) (*Inputs, error) {
	in := &Inputs{}
	var errs []error
	seen := map[int64][]seenFile{} // by size, then os.SameFile
	stdin := ""
	first := func(path string, st fs.FileInfo) bool {
		if path == Stdin {
			if stdin != "" {
				in.Repeats = append(in.Repeats, Repeat{Path: path, First: stdin})
				return false
			}
			stdin = path
			return true
		}
		for _, s := range seen[st.Size()] {
			if os.SameFile(s.st, st) {
				in.Repeats = append(in.Repeats, Repeat{Path: path, First: s.path})
				return false
			}
		}

		seen[st.Size()] = append(seen[st.Size()], seenFile{path: path, st: st})
		return true
	}
	for _, a := range args {
		arg := Arg{Arg: a}
		if a == Stdin {
			if first(a, nil) {
				arg.Files = []string{a}
			}
			in.Args = append(in.Args, arg)
			continue
		}
		st, err := os.Stat(a)
		switch {
		case err != nil:
			errs = append(errs, fileError(a, err))
		case st.IsDir():
			arg.Dir = true
			if first(a, st) {
				files, skipped, err := dir(a, "", first)
				in.Skipped = append(in.Skipped, skipped...)
				errs = append(errs, err...)
				// A copy of a file of the directory (a rank file copied
				// twice into a run's directory, or into two of its node
				// directories) would be a second rank with the same pid
				// and rank: the same bytes are read once. Copies in
				// different arguments are different runs, as file
				// arguments of the same rank are (load's runs).
				bySize := map[int64][]string{}
			files:
				for _, f := range files {
					if !first(f.path, f.st) {
						continue
					}
					if f.st.Mode().IsRegular() && f.st.Size() > 0 {
						for _, p := range bySize[f.st.Size()] {
							if sameBytes(p, f.path) {
								in.Repeats = append(in.Repeats, Repeat{Path: f.path, First: p, Copy: true})
								continue files
							}
						}
						bySize[f.st.Size()] = append(bySize[f.st.Size()], f.path)
					}
					arg.Files = append(arg.Files, f.path)
					arg.Subdirs = append(arg.Subdirs, f.sub)
				}
				if len(files) == 0 && len(err) == 0 {
					errs = append(errs, fileError(a, errors.New("directory holds no trace files (*.json, *.json.gz, *.sqlite)")))
				}
			}
		default:
			// A FIFO or a device is not opened here: opening a FIFO
			// waits for its writer, and its data can be read only once.
			if st.Mode().IsRegular() {
				if err := readable(a); err != nil {
					errs = append(errs, fileError(a, err))
					break
				}
			}
			if first(a, st) {
				arg.Files = []string{a}
			}
		}
		in.Args = append(in.Args, arg)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return in, nil
}

type seenFile struct {
	path string
	st   fs.FileInfo
	sub  string // the subdirectory of the argument it is in
}

// dir lists the trace files in a directory, sorted by name, those of its
// subdirectories in their place (sub is the path below the argument), and
// the entries it skips with the reason. first is Expand's check for a
// directory reached twice (a symlink loop).
func dir(path, sub string, first func(string, fs.FileInfo) bool) (files []seenFile, skipped []Skipped, errs []error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, nil, []error{fileError(path, err)}
	}
	for _, e := range ents { // sorted by name
		p := filepath.Join(path, e.Name())
		st, reason, err := skip(p)
		switch {
		case err != nil:
			errs = append(errs, fileError(p, err))
		case st != nil && st.IsDir() && reason == "":
			if !first(p, st) {
				continue
			}
			f, s, e := dir(p, filepath.Join(sub, filepath.Base(p)), first)
			if len(f) == 0 && len(e) == 0 {
				// Charts and notes kept beside the traces: one line, not
				// one per file.
				skipped = append(skipped, Skipped{Path: p, Reason: "a directory without trace files"})
				continue
			}
			files, skipped, errs = append(files, f...), append(skipped, s...), append(errs, e...)
		case reason != "":
			skipped = append(skipped, Skipped{Path: p, Reason: reason})
		default:
			files = append(files, seenFile{p, st, sub})
		}
	}
	return files, skipped, errs
}

// skip says why the directory entry at p is not read, or "" to read it.
// CaptureDir is the folder vLLM and SGLang write CUDA-graph capture traces
// to, beside the execution traces: a directory of that name inside an
// input directory holds no ranks, and Expand skips it.
const CaptureDir = "capture_traces"

func skip(p string) (fs.FileInfo, string, error) {
	st, err := os.Stat(p) // through a symlink
	if err != nil {
		return nil, "", err
	}
	switch {
	case st.IsDir() && filepath.Base(p) == CaptureDir:
		return st, "graph-capture traces, not ranks (traceq efficiency reads them)", nil
	case st.IsDir():
		return st, "", nil
	case !st.Mode().IsRegular():
		return st, "not a regular file (" + fileKind(st.Mode()) + ")", nil
	}
	name := filepath.Base(p)
	if strings.HasSuffix(name, ".nsys-rep") || strings.HasSuffix(name, ".qdrep") {
		return st, "an nsys report file: export it first with 'nsys export --type sqlite FILE'", nil
	}
	if !slices.ContainsFunc(traceSuffixes, func(s string) bool { return strings.HasSuffix(name, s) }) {
		return st, "not a trace (named neither *.json, *.json.gz, *.sqlite nor *.sqlite.gz)", nil
	}
	why, err := sniffFile(p)
	if why != "" {
		why = "not a trace (" + why + ")"
	}
	return st, why, err
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// readable checks that a regular file can be opened, so that Expand
// reports every unreadable input before any is parsed.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// sameBytes reports whether the files at a and b (of the same size) hold
// the same bytes; false when either cannot be read (reading reports it).
// Files that differ mostly differ in their first bytes (a gzip header's
// time, a trace's rank and pids), so the comparison stops early; only
// copies are read to the end.
func sameBytes(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	const chunk = 64 << 10
	ba, bb := make([]byte, chunk), make([]byte, chunk)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			// Both at their end (io.EOF or io.ErrUnexpectedEOF after the
			// same count), else a read error: not known to be the same.
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF)
		}
	}
}
