package step

import (
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/traceq/traceq/internal/testenv"
	"github.com/traceq/traceq/parse"
)

// TestAttributorAnyOrder drives the Attributor as a streaming reader does
// (records in shuffled order, launches looked up by correlation id) on
// every bundled trace, and checks it attributes every activity as
// FindSteps does: the attribution does not depend on record order.
func TestAttributorAnyOrder(t *testing.T) {
	files, _ := filepath.Glob(testenv.Testdata(t, "traces", "torch", "*.json*"))
	if len(files) == 0 {
		t.Fatal("no bundled traces")
	}
	rng := rand.New(rand.NewSource(5))
	for _, f := range files {
		tr, err := parse.File(f, parse.Options{})
		if err != nil {
			continue // the bundled traces without GPU work
		}
		want, err := Find(tr, Options{})
		if err != nil || want == nil {
			continue
		}
		a, _ := NewAttributor(tr, Options{})
		// Launch steps by (proc, corr): the earliest call of a pair.
		launch := map[[2]int64]int32{}
		for _, i := range rng.Perm(len(tr.Launches)) {
			l := &tr.Launches[i]
			k := [2]int64{int64(l.Proc), l.Corr}
			if tr.FindLaunch(l.Proc, l.Corr) == l {
				launch[k] = a.LaunchStep(l)
			}
		}
		order := rng.Perm(len(tr.Activities))
		got := make([]int32, len(tr.Activities))
		var pending []int
		for _, i := range order {
			act := &tr.Activities[i]
			s, ok := launch[[2]int64{int64(act.Proc), act.Corr}]
			if act.Corr == 0 || !ok || !a.HasCPUMarkers() {
				pending = append(pending, i)
				continue
			}
			got[i] = s
			a.Observe(act, s)
		}
		a.Resolve()
		for _, i := range pending {
			got[i] = a.MirrorStep(&tr.Activities[i])
		}
		if !slices.Equal(got, want.Of) {
			t.Errorf("%s: shuffled attribution differs from FindSteps", filepath.Base(f))
		}
		if !reflect.DeepEqual(a.Steps(), want.List) {
			t.Errorf("%s: steps differ", filepath.Base(f))
		}
	}
}
