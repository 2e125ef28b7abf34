package trace

import (
	"math/rand/v2"
	"testing"
)

// TestLaunchFinder: Find gives FindLaunch's call for every key (processes
// and ids present, absent, between and beyond, negative processes), after
// any first lookup, and in long runs of lookups in order and at random.
func TestLaunchFinder(t *testing.T) {
	tr := &Trace{}
	for _, l := range []struct {
		proc int32
		corr int64
	}{{0, 1}, {0, 3}, {0, 3}, {0, 4}, {0, 9}, {1, 2}, {1, 2}, {3, 1}, {3, 5}, {3, 6}, {3, 7}, {3, 10}} {
		tr.Launches = append(tr.Launches, Launch{Proc: l.proc, Corr: l.corr, Start: Time(len(tr.Launches))})
	}
	tr.Sort()
	want := func(proc int32, corr int64) int {
		l := tr.FindLaunch(proc, corr)
		if l == nil {
			return -1
		}
		return int(l.Start) // the calls' starts are their indices
	}
	type key struct {
		proc int32
		corr int64
	}
	var keys []key
	for proc := int32(-1); proc <= 5; proc++ {
		for corr := int64(0); corr <= 11; corr++ {
			keys = append(keys, key{proc, corr})
		}
	}
	for _, first := range keys {
		for _, k := range keys {
			// The first lookup, found or not, leaves its process's
			// position where it ended.
			f := NewLaunchFinder(tr.Launches)
			if got, w := f.Find(first.proc, first.corr), want(first.proc, first.corr); got != w {
				t.Fatalf("Find(%d, %d) = %d, want %d", first.proc, first.corr, got, w)
			}
			if got, w := f.Find(k.proc, k.corr), want(k.proc, k.corr); got != w {
				t.Errorf("after (%d, %d): Find(%d, %d) = %d, want %d", first.proc, first.corr, k.proc, k.corr, got, w)
			}
		}
	}
	if (&LaunchFinder{}).Find(0, 1) != -1 {
		t.Error("no calls: found one")
	}

	// Many calls of three processes, looked up in order (interleaved) and
	// at random.
	rng := rand.New(rand.NewPCG(7, 8))
	big := &Trace{}
	for i := range 30000 {
		big.Launches = append(big.Launches, Launch{Proc: int32(rng.IntN(3)), Corr: int64(i/2 + rng.IntN(3)), Start: Time(i)})
	}
	big.Sort()
	at := make([]int, len(big.Launches)) // by start, the call's index
	for i, l := range big.Launches {
		at[l.Start] = i
	}
	f := NewLaunchFinder(big.Launches)
	for i := range 60000 {
		proc, corr := int32(rng.IntN(4)), int64(i/4+rng.IntN(5))
		if i%3 == 0 {
			corr = int64(rng.IntN(16000))
		}
		w := -1
		if l := big.FindLaunch(proc, corr); l != nil {
			w = at[l.Start]
		}
		if got := f.Find(proc, corr); got != w {
			t.Fatalf("lookup %d: Find(%d, %d) = %d, want %d", i, proc, corr, got, w)
		}
	}
}
