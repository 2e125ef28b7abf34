package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Expand turns the command-line arguments into input files: a directory
// stands for the trace files directly inside it (*.json, *.json.gz,
// *.sqlite, *.sqlite.gz), sorted by name, so a directory of rank files is a rank set.
func Expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, unwrapPathError(err))
		}
		var files []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				continue
			}
			if strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz") || strings.HasSuffix(n, ".sqlite") || strings.HasSuffix(n, ".sqlite.gz") {
				files = append(files, filepath.Join(a, n))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: directory holds no trace files (*.json, *.json.gz, *.sqlite)", a)
		}
		slices.Sort(files)
		out = append(out, files...)
	}
	return out, nil
}
