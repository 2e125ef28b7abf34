package parse

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/traceq/traceq/parse/chrometrace"
	"github.com/traceq/traceq/parse/nsyssqlite"
)

// sniffSize bounds how much of a file (decompressed) sniffFile looks at.
// Kineto writes traceEvents after a few kB of metadata; what needs more
// to decide is read as a trace, and the parser says what is wrong.
const sniffSize = 256 << 10

// sniffFile says why the file at path is not a trace, from its first
// bytes, or "" when it is one or cannot be told from them (an empty or
// damaged file is read, so that its error is reported, not skipped). It
// is how a directory tells its traces from the other files it holds
// (truth.json, TraceLens's execution_details.json, settings), without
// parsing each file twice.
func sniffFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); chrometrace.IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", nil // the parser reports it
		}
		r = zr
	}
	buf := make([]byte, sniffSize)
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", err // unreadable
		}
		// Damaged compressed data: read it, and report it.
		return "", nil
	}
	return notTrace(buf[:n]), nil
}

// notTrace says why b, the start of a file, is not the start of a trace,
// or "" when it is one or cannot be told.
func notTrace(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	switch {
	case len(b) == 0:
		return "" // empty: an error, not a skip
	case nsyssqlite.Sniff(b):
		return ""
	case b[0] != '{' && b[0] != '[':
		return "neither JSON, gzip nor SQLite"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	open, err := dec.Token()
	if err != nil {
		return ""
	}
	switch open {
	case json.Delim('{'):
		// An object is a trace when it has traceEvents, wherever the key is.
		found, ok := hasKey(dec, "traceEvents")
		if ok && !found {
			return "a JSON object without traceEvents"
		}
	case json.Delim('['):
		// An array is a trace when it holds an event (an object with a
		// ph), as the parser decides.
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return ""
			}
			if t != json.Delim('{') {
				if _, ok := t.(json.Delim); ok && !skipRest(dec) {
					return ""
				}
				continue
			}
			if found, ok := hasKey(dec, "ph"); found || !ok {
				return ""
			}
		}
		if t, err := dec.Token(); err == nil && t == json.Delim(']') {
			return "a JSON array without events (objects with a ph)"
		}
	}
	return ""
}

// hasKey reads the rest of an object whose '{' dec has read and reports
// whether it has key; ok is false when b ended (or broke) before the
// object did.
func hasKey(dec *json.Decoder, key string) (found, ok bool) {
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false, false
		}
		if k == key {
			return true, true
		}
		if !skipValue(dec) {
			return false, false
		}
	}
	// More is false at the end of the object and at the end of b alike.
	t, err := dec.Token()
	return false, err == nil && t == json.Delim('}')
}

// skipValue reads one value.
func skipValue(dec *json.Decoder) bool {
	t, err := dec.Token()
	if err != nil {
		return false
	}
	if _, ok := t.(json.Delim); ok {
		return skipRest(dec)
	}
	return true
}

// skipRest reads the rest of an object or array whose opening dec has
// read.
func skipRest(dec *json.Decoder) bool {
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return true
}
