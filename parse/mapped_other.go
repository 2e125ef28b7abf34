//go:build !(linux || darwin || freebsd)

package parse

import (
	"errors"
	"os"
)

// mapping is a mapped file (mapped.go): here, files are read instead.
type mapping struct{ data []byte }

var errNoMap = errors.New("not mapped")

func mapFile(*os.File, int64) (*mapping, error) { return nil, errNoMap }

func (m *mapping) drop(int64, int64) {}

func (m *mapping) close() {}
