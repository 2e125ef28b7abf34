package chrometrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// readerTrace reads data with a Reader and assembles the records as Parse
// does (sorted, exact duplicates of GPU activities dropped and counted),
// in a test's own code, so that it can be compared with Parse's model.
// Procs, which no record carries, are left nil.
func readerTrace(t testing.TB, data []byte) (*trace.Trace, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tr := &trace.Trace{}
	var last int64 = -1
	for {
		ev, err := r.ReadEvent()
		if err != nil {
			var te *TruncatedError
			switch {
			case err == io.EOF:
			case errors.As(err, &te) && errors.Is(err, ErrTruncated):
				tr.Truncated = &te.Truncation
			default:
				return nil, err
			}
			break
		}
		if ev.Kind != KindTopLevel {
			if ev.Index != last+1 {
				t.Fatalf("event index %d after %d", ev.Index, last)
			}
			last = ev.Index
			if !IsGzip(data) && !bytes.Equal(ev.Raw, data[ev.Offset:ev.Offset+int64(len(ev.Raw))]) {
				t.Fatalf("event %d: raw text is not the input's at offset %d", ev.Index, ev.Offset)
			}
		}
		switch ev.Kind {
		case KindActivity:
			tr.Activities = append(tr.Activities, ev.Activity)
		case KindLaunch:
			tr.Launches = append(tr.Launches, ev.Launch)
		case KindRange:
			tr.Ranges = append(tr.Ranges, ev.Range)
		}
		if ev.HasCollective {
			tr.Collectives = append(tr.Collectives, ev.Collective)
		}
	}
	tr.Names = slices.Clone(r.d.names.Names())
	tr.Meta = r.meta()
	tr.Anomalies = r.anomalies()
	tr.Sort()
	var dups []string
	tr.Activities = dropDuplicates(tr.Activities, func(a trace.Activity) string {
		return fmt.Sprintf("duplicate GPU activity dropped|%s at ts %d ns", tr.Name(a.Name), a.Start)
	}, &dups)
	tr.Launches = dropDuplicates(tr.Launches, func(l trace.Launch) string {
		return fmt.Sprintf("duplicate launch call dropped|%s at ts %d ns", tr.Name(l.Name), l.Start)
	}, &dups)
	tr.Ranges = dropDuplicates(tr.Ranges, func(r trace.Range) string {
		return fmt.Sprintf("duplicate range dropped|%s at ts %d ns", tr.Name(r.Name), r.Start)
	}, &dups)
	tr.Collectives = dropDuplicates(tr.Collectives, func(c trace.Collective) string {
		return fmt.Sprintf("duplicate collective dropped|%s at ts %d ns", tr.Name(c.Op), c.Start)
	}, &dups)
	for _, d := range dups {
		what, example, _ := strings.Cut(d, "|")
		tr.AddAnomaly(what, 1, example)
	}
	tr.SortAnomalies()
	return tr, nil
}

// sameAsParse checks that a Reader and Parse (one worker) agree on data:
// the same records, names, metadata, anomalies, truncation or error.
func sameAsParse(t testing.TB, name string, data []byte) {
	t.Helper()
	want, werr := Parse(bytes.NewReader(data), Options{Workers: 1})
	got, gerr := readerTrace(t, data)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%s: Parse error %v, Reader error %v", name, werr, gerr)
	}
	if werr != nil {
		return
	}
	if len(want.Procs) > 1 {
		// A Reader does not tell the processes of a file that holds
		// several apart (its records are all in process 0), so its
		// records, and which of them are duplicates, differ.
		return
	}
	stripAttrs(t, want, len(got.Names))
	got.Procs = want.Procs
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the Reader's records differ from Parse's model: %d/%d activities, %d/%d launches, %d/%d ranges, %d/%d collectives, %d/%d names\nanomalies %v\n     want %v\ntruncated %+v\n     want %+v",
			name, len(got.Activities), len(want.Activities), len(got.Launches), len(want.Launches), len(got.Ranges), len(want.Ranges),
			len(got.Collectives), len(want.Collectives), len(got.Names), len(want.Names), got.Anomalies, want.Anomalies, got.Truncated, want.Truncated)
	}
}

// stripAttrs removes from a Parse model what a Reader does not return:
// the attribute tables and ids, and the names only they use (interned
// after the records', so that the records' name ids are the same).
func stripAttrs(t testing.TB, tr *trace.Trace, names int) {
	t.Helper()
	for i := range tr.Activities {
		tr.Activities[i].Attr = 0
	}
	for i := range tr.Launches {
		tr.Launches[i].Attr = 0
	}
	tr.Attrs, tr.Configs, tr.Ops, tr.OpSigs = nil, nil, nil, nil
	if len(tr.Names) > names {
		tr.Names = tr.Names[:names]
	}
	tr.Sort()
}

// dropDuplicates drops the exact duplicates from the sorted s, noting each
// with describe.
func dropDuplicates[T comparable](s []T, describe func(T) string, dups *[]string) []T {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, x := range s[1:] {
		if x == out[len(out)-1] {
			*dups = append(*dups, describe(x))
			continue
		}
		out = append(out, x)
	}
	return out
}

// TestReaderMatchesParse: on every real fixture, whole and cut, a
// ReadEvent loop gives Parse's model record for record.
func TestReaderMatchesParse(t *testing.T) {
	for _, f := range fixtures(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameAsParse(t, f, raw)
		if IsGzip(raw) {
			plain := readFile(t, f)
			// Cut the JSON and the gzip stream: the truncations agree.
			sameAsParse(t, f+" cut in half", plain[:len(plain)/2])
			sameAsParse(t, f+" (gzip) cut at a third", raw[:len(raw)/3])
		}
	}
	synthJSON, _ := synth(3000, 1)
	sameAsParse(t, "synth", synthJSON)
}

// TestReaderEvents follows one small trace event by event.
func TestReaderEvents(t *testing.T) {
	const meta = `{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}`
	const flow = `{"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 6, "cat": "ac2g", "name": "ac2g"}`
	const launch = `{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 1, "args": {"correlation": 1}}`
	doc := `{"schemaVersion": 1, "traceEvents": [` + meta + `, ` + ev1 + `,` + flow + `,` + launch + `,` + ev3 + `, 7], "distributedInfo": {"rank": 3}}`
	for _, in := range []struct {
		name string
		data []byte
	}{{"plain", []byte(doc)}, {"gzip", gzipOf(t, []byte(doc))}} {
		t.Run(in.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(in.data))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				ev, err := r.ReadEvent()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if string(ev.Raw) != doc[ev.Offset:ev.Offset+int64(len(ev.Raw))] {
					t.Errorf("%s at %d: raw %q is not the input's", ev.Kind, ev.Offset, ev.Raw)
				}
				s := fmt.Sprintf("%d %s", ev.Index, ev.Kind)
				switch ev.Kind {
				case KindTopLevel:
					s += " " + ev.Key + "=" + string(ev.Raw)
				case KindActivity:
					s += fmt.Sprintf(" %s start %d dur %d corr %d stream %d", r.Name(ev.Activity.Name), ev.Activity.Start, ev.Activity.Dur, ev.Activity.Corr, ev.Activity.Stream)
				case KindLaunch:
					s += fmt.Sprintf(" %s corr %d thread %d", r.Name(ev.Launch.Name), ev.Launch.Corr, ev.Launch.Thread)
				default:
					s += fmt.Sprintf(" ph %s cat %q ts %d/%v dur %d/%v id %s", ev.Ph, ev.Cat, ev.TS, ev.HasTS, ev.Dur, ev.HasDur, ev.ID)
				}
				got = append(got, s)
			}
			want := []string{
				"-1 top-level value schemaVersion=1",
				`0 metadata ph M cat "" ts 0/false dur 0/false id `,
				"1 activity k1 start 10000 dur 2000 corr 1 stream 7",
				`2 skipped ph s cat "ac2g" ts 6000/true dur 0/false id 7`,
				"3 launch cudaLaunchKernel corr 1 thread 1",
				`4 skipped ph X cat "cpu_op" ts 5000/true dur 30000/true id `,
				`5 skipped ph  cat "" ts 0/false dur 0/false id `,
				`-1 top-level value distributedInfo={"rank": 3}`,
			}
			if !slices.Equal(got, want) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if m := r.meta(); m.Rank != 3 || m.SchemaVersion != "1" {
				t.Errorf("meta %+v", m)
			}
			if a := r.anomalies(); len(a) != 1 || a[0].What != anomNotObject || a[0].Count != 1 {
				t.Errorf("anomalies %+v", a)
			}
			// After the end, the end again.
			if _, err := r.ReadEvent(); err != io.EOF {
				t.Errorf("after EOF: %v", err)
			}
		})
	}
}

// TestReaderTruncated: the events before the cut, then Parse's truncation.
func TestReaderTruncated(t *testing.T) {
	cut := doc[:strings.Index(doc, ev2)+10]
	r, err := NewReader(strings.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []EventKind
	for {
		ev, err := r.ReadEvent()
		if err != nil {
			var te *TruncatedError
			if !errors.Is(err, ErrTruncated) || !errors.As(err, &te) {
				t.Fatalf("error %v, want a truncation", err)
			}
			want, _ := Parse(strings.NewReader(cut), Options{})
			if te.Truncation != *want.Truncated {
				t.Errorf("truncation %+v, Parse says %+v", te.Truncation, *want.Truncated)
			}
			if !strings.HasPrefix(err.Error(), "truncated: the file ends at byte ") {
				t.Errorf("error %q", err)
			}
			break
		}
		kinds = append(kinds, ev.Kind)
	}
	if !slices.Equal(kinds, []EventKind{KindTopLevel, KindActivity}) {
		t.Errorf("kinds %v", kinds)
	}
}

// TestReaderClose: a Reader abandoned early is closed without reading on.
func TestReaderClose(t *testing.T) {
	data, _ := synth(3000, 0)
	r, err := NewReader(bytes.NewReader(gz(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadEvent(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.ReadEvent(); err == nil || err == io.EOF {
		t.Errorf("ReadEvent after Close: %v", err)
	}
}

func BenchmarkReader(b *testing.B) {
	data, kernels := benchInput()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			ev, err := r.ReadEvent()
			if err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			if ev.Kind == KindActivity {
				n++
			}
		}
		if n != kernels {
			b.Fatalf("%d activities, want %d", n, kernels)
		}
	}
	reportCPU(b, c0)
}

// TestReaderSkim: on every real fixture, a skimming Reader gives what a
// full one says of each event (ph, cat, name, ts, dur, id, raw text,
// offset, index), the correlation id of every GPU activity and launch
// call, and the same top-level values, metadata and end.
func TestReaderSkim(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(torchDir, "*.json*"))
	more, _ := filepath.Glob(filepath.Join(torchDir, "*", "*.json*"))
	files = append(append(files, more...), collectivesCut)
	synthJSON, _ := synth(3000, 1)
	inputs := map[string][]byte{"synth": synthJSON}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = raw
		if IsGzip(raw) {
			inputs[f+" (gzip) cut at a third"] = raw[:len(raw)/3]
		}
	}
	allCorrs := 0
	for name, data := range inputs {
		full, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		skim, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		skim.Skim()
		var n, corrs int
		for {
			a, errA := full.ReadEvent()
			b, errB := skim.ReadEvent()
			if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
				t.Fatalf("%s: event %d: errors %v, %v", name, n, errA, errB)
			}
			if errA != nil {
				break
			}
			n++
			kind := a.Kind
			if kind != KindTopLevel && kind != KindMetadata {
				kind = KindSkipped
			}
			corr := a.Corr
			if k, _ := classifyCat(a.Cat); k != catGPU && k != catLaunch {
				corr = 0 // Skim reads it only where Kineto writes it
			} else if corr != 0 {
				corrs++
			}
			if b.Kind != kind || b.Ph != a.Ph || b.Cat != a.Cat || b.Name != a.Name || b.TS != a.TS || b.HasTS != a.HasTS ||
				b.Dur != a.Dur || b.HasDur != a.HasDur || b.ID != a.ID || b.Corr != corr || !bytes.Equal(b.Raw, a.Raw) ||
				b.Offset != a.Offset || b.Index != a.Index || b.Key != a.Key {
				t.Fatalf("%s: event %d: skimmed %+v\nfull %+v", name, n, b, a)
			}
		}
		full.Close()
		skim.Close()
		if n == 0 {
			t.Errorf("%s: no events", name)
		}
		allCorrs += corrs
	}
	if allCorrs < 10000 {
		t.Errorf("%d correlation ids compared", allCorrs)
	}
}
