package chrometrace

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/traceq/traceq/trace"
)

// TestDeviceIDs: a device id that is not an int32 ordinal is an odd
// event, skipped and counted, never wrapped or read as device 0 (issue
// 19: 99999999999 became 1215752191; 1e30 and "gpu 3" became 0).
func TestDeviceIDs(t *testing.T) {
	kernel := func(name, dev string) string {
		return fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": %q, "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {%s"stream": 7, "correlation": 1}}`, name, dev)
	}
	evs := []string{
		kernel("huge", `"device": 99999999999, `),
		kernel("exponent", `"device": 1e30, `),
		kernel("exponent as text", `"device": "1e30", `),
		kernel("words", `"device": "gpu 3", `),
		kernel("negative", `"device": -2, `),
		kernel("fraction", `"device": 1.5, `),
		kernel("text number", `"device": "3", `),
		kernel("int32 max", `"device": 2147483647, `),
		kernel("from pid", ``),
		`{"ph": "X", "cat": "kernel", "name": "pid words", "pid": "gpu 3", "tid": 7, "ts": 1, "dur": 1, "args": {"stream": 7, "correlation": 1}}`,
		`{"ph": "X", "cat": "kernel", "name": "no device", "tid": 7, "ts": 1, "dur": 1, "args": {"stream": 7, "correlation": 1}}`,
		`{"ph": "X", "cat": "kernel", "name": "huge stream", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"device": 1, "stream": 99999999999, "correlation": 1}}`,
		`{"ph": "X", "cat": "gpu_user_annotation", "name": "range on a huge device", "pid": 99999999999, "tid": 7, "ts": 1, "dur": 1}`,
	}
	tr, err := parseBoth(t, []byte(`{"traceEvents": [`+strings.Join(evs, ",\n")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range tr.Activities {
		got[tr.Name(a.Name)] = fmt.Sprintf("%d/%d", a.Device, a.Stream)
	}
	want := map[string]string{"text number": "3/7", "int32 max": "2147483647/7", "from pid": "0/7", "no device": "-1/7", "huge stream": "1/-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("activities (device/stream):\n got %v\nwant %v", got, want)
	}
	if len(tr.Ranges) != 0 {
		t.Errorf("a GPU range on device 99999999999 was kept: %+v", tr.Ranges)
	}
	anom := map[string]int64{}
	for _, a := range tr.Anomalies {
		anom[a.What] = a.Count
	}
	if anom[anomBadDevice] != 8 || anom["stream id out of range; set to -1"] != 1 {
		t.Errorf("anomalies %v, want 8 %q and one stream", anom, anomBadDevice)
	}
}

// TestTwoProcesses: a file holding two processes whose correlation ids
// repeat (issue 19: every kernel went to the first, with the first's
// launch calls). Kernels carrying their process's pid go to it; kernels
// carrying a device id go to the one process that launched their
// correlation id, and to the first, counted, when both did.
func TestTwoProcesses(t *testing.T) {
	var evs []string
	for _, pid := range []int{100, 200} {
		for corr := 1; corr <= 3; corr++ {
			evs = append(evs, fmt.Sprintf(`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d, "ts": %d, "dur": %d, "args": {"correlation": %d}}`,
				pid, pid, pid+corr*10, pid/100, corr))
			evs = append(evs, fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "k%d", "pid": %d, "tid": 7, "ts": %d, "dur": 5, "args": {"device": %d, "stream": 7, "correlation": %d}}`,
				corr, pid, 1000+pid+corr, pid/100-1, corr))
		}
	}
	evs = append(evs,
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 200, "tid": 200, "ts": 900, "dur": 7, "args": {"correlation": 9}}`,
		// A device pid: correlation 9 was launched by 200 only.
		`{"ph": "X", "cat": "kernel", "name": "only200", "pid": 1, "tid": 7, "ts": 2000, "dur": 5, "args": {"device": 1, "stream": 7, "correlation": 9}}`,
		// A device pid and a correlation id both processes launched.
		`{"ph": "X", "cat": "kernel", "name": "either", "pid": 0, "tid": 7, "ts": 2001, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 2}}`,
		`{"ph": "X", "cat": "user_annotation", "name": "step", "pid": 200, "tid": 200, "ts": 1, "dur": 5000}`)
	tr, err := parseBoth(t, []byte(`{"traceEvents": [`+strings.Join(evs, ",\n")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Procs) != 2 || tr.Procs[0].PID != 100 || tr.Procs[1].PID != 200 {
		t.Fatalf("procs %+v", tr.Procs)
	}
	got := map[string]string{}
	for _, a := range tr.Activities {
		l := tr.FindLaunch(a.Proc, a.Corr)
		dur := int64(-1)
		if l != nil {
			dur = l.Dur
		}
		got[fmt.Sprintf("%s@%d", tr.Name(a.Name), a.Start)] = fmt.Sprintf("proc %d, launch of %d ns", a.Proc, dur)
	}
	want := map[string]string{
		"k1@1101000": "proc 0, launch of 1000 ns", "k2@1102000": "proc 0, launch of 1000 ns", "k3@1103000": "proc 0, launch of 1000 ns",
		"k1@1201000": "proc 1, launch of 2000 ns", "k2@1202000": "proc 1, launch of 2000 ns", "k3@1203000": "proc 1, launch of 2000 ns",
		"only200@2000000": "proc 1, launch of 7000 ns", "either@2001000": "proc 0, launch of 1000 ns",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("activities:\n got %v\nwant %v", got, want)
	}
	if tr.Ranges[0].Proc != 1 {
		t.Errorf("the annotation of pid 200 is in process %d", tr.Ranges[0].Proc)
	}
	var unknown *trace.Anomaly
	for i := range tr.Anomalies {
		if tr.Anomalies[i].What == anomProcUnknown {
			unknown = &tr.Anomalies[i]
		}
	}
	if unknown == nil || unknown.Count != 1 || unknown.Example != "either at ts 2001000 ns (pid 0, correlation 2)" {
		t.Errorf("anomaly %+v", unknown)
	}
}
