package merge

import (
	"os"
	"sync"
	"time"

	"github.com/traceq/traceq/parse/chrometrace"
)

// indexed is a rank's chunk index from the first pass, and the file as
// it was then: the second pass uses the index only on the same file.
type indexed struct {
	idx   *chrometrace.Index
	size  int64
	mtime time.Time
}

// same reports whether path is still the file the index was made of (as
// far as its size and modification time tell; CopyIndexed checks the
// rest as it reads).
func (ix *indexed) same(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == ix.size && fi.ModTime().Equal(ix.mtime)
}

// indexSet holds the chunk indexes the parses of the first pass leave
// (two files at once), by path, until the rank's Reduce takes its own.
type indexSet struct {
	mu sync.Mutex
	m  map[string]*indexed
}

func (s *indexSet) add(path string, idx *chrometrace.Index) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*indexed{}
	}
	s.m[path] = &indexed{idx: idx, size: fi.Size(), mtime: fi.ModTime()}
}

func (s *indexSet) take(path string) *indexed {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.m[path]
	delete(s.m, path)
	return ix
}
