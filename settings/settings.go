// Package settings finds the settings that belong to a deployment rather
// than to one command — the link between the GPUs, the bytes one token
// adds to a tensor-parallel all-reduce, the GPU — so that they are given
// once: on the command line, else in the environment (TRACEQ_LINK,
// TRACEQ_BYTES_PER_TOKEN, TRACEQ_GPU), else in a traceq.toml in the run's
// directory or one of its parents. Each setting says where it came from.
package settings

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
)

// FileName is the settings file looked for in a run's directory and its
// parents.
const FileName = "traceq.toml"

// Name is a setting.
type Name string

// The settings, by their key in traceq.toml.
const (
	Link          Name = "link"
	BytesPerToken Name = "bytes_per_token"
	GPU           Name = "gpu"
)

// Names lists the settings in the order outputs name them.
var Names = []Name{Link, BytesPerToken, GPU}

// Flag is the command-line flag of the setting ("--bytes-per-token").
func (n Name) Flag() string { return "--" + strings.ReplaceAll(string(n), "_", "-") }

// Env is the setting's environment variable ("TRACEQ_BYTES_PER_TOKEN").
func (n Name) Env() string { return "TRACEQ_" + strings.ToUpper(string(n)) }

// Source says where a setting's value came from.
type Source uint8

const (
	FromFlag Source = iota + 1 // the command line
	FromEnv                    // the environment variable
	FromFile                   // a traceq.toml
)

// Setting is one setting's value and where it came from.
type Setting struct {
	Name   Name
	Value  string
	Source Source
	// File is the traceq.toml the value was read from (FromFile);
	// relative paths in the value (an nccl-tests output for link) are
	// relative to its directory (Path).
	File string
}

// From names the setting's origin in a sentence: "--link",
// "TRACEQ_LINK", "runs/traceq.toml".
func (s Setting) From() string {
	switch s.Source {
	case FromFlag:
		return s.Name.Flag()
	case FromEnv:
		return s.Name.Env()
	}
	return s.File
}

// Path is the value as a path: relative to the traceq.toml it came from,
// or as given.
func (s Setting) Path() string {
	if s.Source == FromFile && !filepath.IsAbs(s.Value) {
		return filepath.Join(filepath.Dir(s.File), s.Value)
	}
	return s.Value
}

// Settings are the settings a command found.
type Settings struct {
	set map[Name]Setting
	// Files lists the traceq.toml files read, nearest first.
	Files []string
}

// Get returns the setting and whether it is set.
func (s *Settings) Get(n Name) (Setting, bool) {
	if s == nil {
		return Setting{}, false
	}
	v, ok := s.set[n]
	return v, ok
}

// List returns the settings that are set, in Names order.
func (s *Settings) List() []Setting {
	var out []Setting
	for _, n := range Names {
		if v, ok := s.Get(n); ok {
			out = append(out, v)
		}
	}
	return out
}

// FileError is a traceq.toml that cannot be used: it names the file.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// ErrUnknownKey is a traceq.toml key that is not a setting.
var ErrUnknownKey = errors.New("unknown key")

// Find resolves every setting: flags (the values given on the command
// line, by name; a setting absent from flags was not given), then the
// environment (getenv, os.Getenv in the command), then the traceq.toml
// files found in dirs (the runs' directories) and their parents, the
// nearest first, the first directory's first. Two files that disagree
// on a setting: the first wins, and the disagreement is returned in
// conflicts, a sentence each.
func Find(flags map[Name]string, getenv func(string) string, dirs []string) (s *Settings, conflicts []string, err error) {
	s = &Settings{set: map[Name]Setting{}}
	for _, n := range Names {
		if v, ok := flags[n]; ok && v != "" {
			s.set[n] = Setting{Name: n, Value: v, Source: FromFlag}
			continue
		}
		if v := strings.TrimSpace(getenv(n.Env())); v != "" {
			s.set[n] = Setting{Name: n, Value: v, Source: FromEnv}
		}
	}
	files, err := findFiles(dirs)
	if err != nil {
		return nil, nil, err
	}
	s.Files = files
	for _, f := range files {
		vals, err := readFile(f)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range Names {
			v, ok := vals[n]
			if !ok {
				continue
			}
			cur, set := s.set[n]
			switch {
			case !set:
				s.set[n] = Setting{Name: n, Value: v, Source: FromFile, File: f}
			case cur.Source == FromFile && cur.Value != v:
				conflicts = append(conflicts, fmt.Sprintf("%s says %s = %s; %s, nearer, says %s: using %s", f, n, v, cur.File, cur.Value, cur.Value))
			}
		}
	}
	return s, conflicts, nil
}

// findFiles lists the traceq.toml files in dirs and their parents, each
// once, the nearest to the first directory first; each is named relative
// to the working directory when it is below it, else absolutely.
func findFiles(dirs []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	wd, _ := os.Getwd()
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		for {
			p := filepath.Join(abs, FileName)
			if !seen[p] {
				seen[p] = true
				st, err := os.Stat(p)
				switch {
				case err == nil && st.Mode().IsRegular():
					out = append(out, display(wd, p))
				case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ENOTDIR):
					return nil, &FileError{Path: display(wd, p), Err: err}
				}
			}
			parent := filepath.Dir(abs)
			if parent == abs {
				break
			}
			abs = parent
		}
	}
	return out, nil
}

// display names path relative to wd when it is below it.
func display(wd, path string) string {
	if rel, err := filepath.Rel(wd, path); err == nil && wd != "" && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// maxFile bounds a traceq.toml: it holds three settings.
const maxFile = 1 << 20

// readFile reads one traceq.toml: its settings as strings (a number of
// GB/s for link is written as given).
func readFile(path string) (map[Name]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if st.Size() > maxFile {
		return nil, &FileError{Path: path, Err: fmt.Errorf("%d bytes: not a settings file", st.Size())}
	}
	var raw map[string]any
	if _, err := toml.DecodeFile(path, &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &FileError{Path: path, Err: fmt.Errorf("line %d: %s", pe.Position.Line, pe.Message)}
		}
		return nil, &FileError{Path: path, Err: err}
	}
	out := map[Name]string{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare)
	for _, k := range keys {
		n := Name(k)
		if !slices.Contains(Names, n) {
			return nil, &FileError{Path: path, Err: fmt.Errorf("%w %q (want %s)", ErrUnknownKey, k, names())}
		}
		switch v := raw[k].(type) {
		case string:
			if n == BytesPerToken {
				return nil, &FileError{Path: path, Err: fmt.Errorf("%s = %q: want a whole number of bytes", k, v)}
			}
			out[n] = v
		case int64:
			if n == GPU {
				return nil, &FileError{Path: path, Err: fmt.Errorf("%s = %d: want a GPU's name in quotes", k, v)}
			}
			out[n] = strconv.FormatInt(v, 10)
		case float64:
			if n != Link {
				return nil, &FileError{Path: path, Err: fmt.Errorf("%s = %v: want a whole number", k, v)}
			}
			out[n] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return nil, &FileError{Path: path, Err: fmt.Errorf("%s: want a string or a number, not a %T", k, v)}
		}
	}
	return out, nil
}

func names() string {
	s := make([]string, len(Names))
	for i, n := range Names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
