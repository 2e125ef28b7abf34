package slice

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/traceq/traceq/parse/chrometrace"
)

// seeker opens data as a file opens: it can seek.
func seeker(data []byte) Opener {
	return func() (io.ReadCloser, error) {
		return struct {
			io.ReadSeeker
			io.Closer
		}{bytes.NewReader(data), io.NopCloser(nil)}, nil
	}
}

// copyBoth copies sel out of data whole (CopyTo) and guided by idx
// (CopyIndexed), as a slice writes them (the top-level values after the
// events), and checks that the two are the same.
func copyBoth(t *testing.T, what string, open Opener, sel *Selection, idx *chrometrace.Index) (*Stats, Reread) {
	t.Helper()
	var a, b bytes.Buffer
	wa := NewWriter(&a)
	st, tops, err := CopyTo(wa, open, sel, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	wa.Close(tops)
	wb := NewWriter(&b)
	got, gtops, rr, err := CopyIndexed(wb, open, sel, nil, idx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	wb.Close(gtops)
	if !bytes.Equal(a.Bytes(), b.Bytes()) || *st != *got || !reflect.DeepEqual(tops, gtops) {
		t.Fatalf("%s: guided by the index: %+v, %d top-level values, %d bytes; whole: %+v, %d, %d", what, got, len(gtops), b.Len(), st, len(tops), a.Len())
	}
	if !rr.Indexed || rr.Chunks != len(idx.Chunks) {
		t.Fatalf("%s: %+v", what, rr)
	}
	return st, rr
}

// TestCopyIndexed: on real traces, plain and gzip, copies guided by the
// chunk index write what copies of the whole file write, with the same
// counts and top-level values, for windows by time across the trace and
// for a selection by correlation id; they read fewer events where the
// window is a small part of the trace; and they say so (ErrStaleIndex)
// when the input is not the one indexed.
func TestCopyIndexed(t *testing.T) {
	for _, f := range []string{"hta_ns_resolution.json.gz", "vllm_mixed_piecewise.json.gz", "dlrm_rank0_plain.json"} {
		data, err := os.ReadFile("../testdata/traces/torch/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var idx *chrometrace.Index
		tr, err := chrometrace.Parse(bytes.NewReader(data), chrometrace.Options{Workers: 3, BlockSize: 16 << 10,
			Index: func(x *chrometrace.Index) { idx = x }})
		if err != nil || idx == nil {
			t.Fatalf("%s: no index (%v)", f, err)
		}
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		for _, a := range tr.Activities {
			first, last = min(first, int64(a.Start)), max(last, int64(a.End()))
		}
		span := last - first
		opens := []Opener{opener(data)}
		if !chrometrace.IsGzip(data) {
			opens = append(opens, seeker(data)) // sought, and read through
		}
		for _, open := range opens {
			var fewer bool
			for _, w := range [][2]int64{{0, 10}, {45, 55}, {90, 100}, {0, 100}, {-100, 200}, {150, 160}} {
				sel := Window(first+span*w[0]/100, first+span*w[1]/100)
				st, rr := copyBoth(t, f, open, sel, idx)
				if w[1]-w[0] <= 10 && rr.Events < st.Read {
					fewer = true
				}
			}
			if !fewer {
				t.Errorf("%s: no window read fewer events than the whole", f)
			}
			// By correlation id: the launches of a tenth of the trace,
			// the CPU window over them, the GPU window anywhere.
			corr := map[int64]bool{}
			for _, l := range tr.Launches {
				if s := int64(l.Start); s >= first+span*4/10 && s <= first+span/2 {
					corr[l.Corr] = true
				}
			}
			sel := &Selection{CPU: []Interval{{first + span*4/10, first + span/2}}, GPU: Interval{first, last}, Corr: corr}
			copyBoth(t, f+" by correlation", open, sel, idx)
		}
		// Another file under the index: stale.
		if chrometrace.IsGzip(data) {
			continue
		}
		other := bytes.Replace(data, []byte(`"ph": "X"`), []byte(`"ph":"X"`), 100)
		_, _, _, err = CopyIndexed(NewWriter(io.Discard), seeker(other), Window(first, last), nil, idx)
		if !errors.Is(err, ErrStaleIndex) {
			t.Errorf("%s changed: %v, want ErrStaleIndex", f, err)
		}
	}
}
