package parse

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Stdin is the input name that stands for standard input.
const Stdin = "-"

// FileError is an error about one input file: every error parse returns
// for a file is one, so a caller names the file once and finds the cause
// with errors.Is and errors.As.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return DisplayName(e.Path) + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// fileError wraps err with path. An error that already is a *FileError
// for path is returned as it is, so wrapping twice names the file once;
// an *fs.PathError gives up its own copy of the path ("open PATH: …")
// and keeps its cause (errors.Is(err, fs.ErrNotExist) still holds).
func fileError(path string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FileError
	if errors.As(err, &fe) && fe.Path == path {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return &FileError{Path: path, Err: err}
}

// DisplayName is path as messages show it: "standard input" for Stdin,
// and quoted (strconv.Quote) when it holds what would break a one-line
// message or hide itself — a control character, invalid UTF-8, a
// character that does not print, or leading or trailing space. Ordinary
// names are shown as they are.
func DisplayName(path string) string {
	if path == Stdin {
		return "standard input"
	}
	if odd(path) {
		return strconv.Quote(path)
	}
	return path
}

func odd(s string) bool {
	if s == "" || !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return true
	}
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0
}
