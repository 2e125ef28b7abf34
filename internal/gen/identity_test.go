package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestOutputUnchanged pins the bytes Write produced before the efficiency
// options existed: options that default to off must leave every existing
// output (and the goldens and figures built on it) byte-identical.
func TestOutputUnchanged(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		rank int
		sum  string
	}{
		{Config{Ranks: 3, Steps: 14, DecodeEvery: 5, MixedEvery: 3, Layers: 3, Seed: 42}, 1, "28c1c8e04873c6cc8452c688e91e79de301181cf55ddb6a3e547eea526e56495"},
		{Config{Ranks: 2, Steps: 9, DecodeEvery: 4, Layers: 2, Streams: 1, DropCorrEvery: 5, Seed: 7}, 0, "9c6c4ddd2291f48eb0faeec605db890185cbf4f76293b5a30ad26a4eff1cc40c"},
		{Config{Ranks: 2, Steps: 12, DecodeEvery: 6, Layers: 2, Seed: 5, SlowCategory: "attention/fa2", SlowNS: 7_000}, 1, "6ae3124287098e8ca8ad29acd207ce1a2f5ac1a963e0cf4b420f802b6cb54203"},
	} {
		h := sha256.New()
		if _, err := Write(h, c.cfg, c.rank); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.sum {
			t.Errorf("%+v rank %d: sha256 %s, want %s", c.cfg, c.rank, got, c.sum)
		}
	}
}
