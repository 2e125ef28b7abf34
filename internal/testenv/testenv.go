// Package testenv locates what tests read from outside the repository: the
// reference traces in ../shared, next to the module root. Tests that need
// them skip, with a message, where that folder is absent (a clean clone).
package testenv

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// moduleRoot is the directory holding go.mod, found upward from the
// test's working directory (go test runs in the package's directory).
var moduleRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
})

// ModuleRoot returns the module's root directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("testenv: no go.mod above the working directory: %v", err)
	}
	return root
}

// Shared returns ../shared/<elem...> resolved from the module root, or
// skips the test when it does not exist.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{ModuleRoot(t), "..", "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reference data not present (%s): %v", filepath.Join(append([]string{"../shared"}, elem...)...), err)
	}
	return p
}

// Testdata returns <module root>/testdata/<elem...>: the bundled fixtures.
func Testdata(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{ModuleRoot(t), "testdata"}, elem...)...)
}

// SharedIfPresent is Shared for tests that also run without the
// reference data: it returns "" instead of skipping.
func SharedIfPresent(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{ModuleRoot(t), "..", "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
