package collectives

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/traceq/traceq/internal/testenv"
)

// TestReadNCCLTestsReal reads a real all_reduce_perf output (16 × H100,
// testdata/nccl-tests/README.md) and checks its rows against the file.
func TestReadNCCLTestsReal(t *testing.T) {
	p := testenv.Testdata(t, "nccl-tests", "h100-2x8-all_reduce_perf.txt")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadNCCLTests(bytes.NewReader(data), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Curves) != 1 {
		t.Fatalf("%d curves, want 1", len(l.Curves))
	}
	c := l.Curves[0]
	if c.Op != "allreduce" || c.Ranks != 16 || len(c.Points) != 31 {
		t.Fatalf("op %q, %d ranks, %d sizes; want allreduce, 16, 31", c.Op, c.Ranks, len(c.Points))
	}
	// The bus factor from the largest row: 338.82 / 180.71 ≈ 2·15/16.
	if math.Abs(c.Factor-338.82/180.71) > 1e-12 || math.Abs(c.Factor-1.875) > 0.001 {
		t.Errorf("factor %v, want 338.82/180.71", c.Factor)
	}
	// Rows: the better of out-of-place and in-place.
	for _, want := range []Point{
		{8, 123_500, 0}, {1048576, 203_200, 9.68}, {2097152, 252_900, 15.55}, {8589934592, 47_535_000, 338.82},
	} {
		i := -1
		for j, p := range c.Points {
			if p.Bytes == want.Bytes {
				i = j
			}
		}
		if i < 0 || math.Abs(c.Points[i].TimeNS-want.TimeNS) > 1e-6 || c.Points[i].BusGBps != want.BusGBps {
			t.Errorf("size %d: %+v, want %+v", want.Bytes, c.Points[max(i, 0)], want)
		}
	}
	if l.GBps != 338.82 || l.Label() != "nccl-tests (h100-2x8-all_reduce_perf.txt)" {
		t.Errorf("GBps %v, label %q", l.GBps, l.Label())
	}
	// Between two sizes, linear in size; below the first, its time; above
	// the last, its bandwidth; scaled from 16 to 8 ranks by 1.75 / factor.
	for _, tc := range []struct {
		bytes int64
		want  float64 // nccl-tests time before scaling
	}{
		{1572864, 203_200 + 0.5*(252_900-203_200)},
		{4, 123_500},
		{2 * 8589934592, 2 * 47_535_000},
	} {
		got, ok := l.TimeAt("allreduce", 8, tc.bytes)
		want := tc.want * 1.75 / c.Factor
		if !ok || math.Abs(got-want) > 1e-6*want {
			t.Errorf("TimeAt(%d) = %v, %v; want %v", tc.bytes, got, ok, want)
		}
	}
	// One curve: it stands for every collective (busbw is comparable).
	if _, ok := l.TimeAt("allgather", 8, 1<<20); !ok {
		t.Error("the one curve does not stand for allgather")
	}
	if _, ok := l.TimeAt("other", 8, 1<<20); ok {
		t.Error("an op without a bus factor has a link time")
	}
}

// TestReadNCCLTestsLayouts reads the column layouts nccl-tests printed
// over the years, and several tests in one output (a script running
// all_reduce_perf then broadcast_perf). The rows are from public logs.
func TestReadNCCLTestsLayouts(t *testing.T) {
	old := `Running: ./build/all_reduce_perf -b 8 -e 10240M -f 2 -g 12
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144   float     sum    89.15   11.76   21.56  2e-07    88.14   11.90   21.81  2e-07
     2097152        524288   float     sum    143.5   14.62   26.80  2e-07    144.7   14.50   26.58  2e-07
  8589934592    2147483648   float     sum   127453   67.40  123.56  2e-07   127443   67.40  123.57  2e-07
# Avg bus bandwidth    : 42.5578
Running: ./build/broadcast_perf -b 8 -e 10240M -f 2 -g 12
#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144   float       0    74.62   14.05   14.05  0e+00    79.08   13.26   13.26  0e+00
     2097152        524288   float       0    75.95   27.61   27.61  0e+00    75.47   27.79   27.79  0e+00
`
	l, err := ReadNCCLTests(strings.NewReader(old), "dgx2.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Curves) != 2 || l.Curves[0].Op != "allreduce" || l.Curves[1].Op != "broadcast" {
		t.Fatalf("curves %+v", l.Curves)
	}
	ar, bc := l.Curves[0], l.Curves[1]
	if ar.Points[0].TimeNS != 88_140 || ar.Points[0].BusGBps != 21.81 || ar.Points[2].TimeNS != 127_443_000 {
		t.Errorf("allreduce points %+v", ar.Points)
	}
	if math.Abs(ar.Factor-123.56/67.40) > 1e-12 || bc.Factor != 1 || bc.Points[1].TimeNS != 75_470 {
		t.Errorf("factors %v %v, broadcast %+v", ar.Factor, bc.Factor, bc.Points)
	}
	// Each collective its own curve; no curve for the others.
	if got, ok := l.TimeAt("broadcast", 12, 2097152); !ok || got != 75_470 {
		t.Errorf("broadcast at 2 MiB: %v, %v", got, ok)
	}
	if _, ok := l.TimeAt("allgather", 12, 2097152); ok {
		t.Error("allgather has a time, but the output measured allreduce and broadcast only")
	}
	// The oldest layout: no redop column.
	oldest := `#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
       32768          4096   float    13.39    1.22    1.22  0e+00    11.85    1.38    1.38  0e+00
       65536          8192   float    16.57    1.98    1.98  0e+00    13.83    2.37    2.37  0e+00
`
	l, err = ReadNCCLTests(strings.NewReader(oldest), "old.txt")
	if err != nil || len(l.Curves) != 1 || l.Curves[0].Op != "" || l.Curves[0].Points[1].TimeNS != 13_830 {
		t.Fatalf("%+v, %v", l, err)
	}
	for _, bad := range []string{"", "hello\n", "#  size time busbw\n# Avg bus bandwidth : 0\n"} {
		if _, err := ReadNCCLTests(strings.NewReader(bad), "x.txt"); !errors.Is(err, ErrNoNCCLTests) {
			t.Errorf("%q: err %v, want ErrNoNCCLTests", bad, err)
		}
	}
	if _, err := ReadNCCLTests(strings.NewReader(strings.Repeat("x", maxNCCLTestsLine+1)), "x.txt"); err == nil || !strings.Contains(err.Error(), "x.txt:1:") {
		t.Errorf("a long line: %v", err)
	}
}

// FuzzReadNCCLTests: any input gives a link or an error, never a panic;
// a link's curves are sorted by size with positive times.
func FuzzReadNCCLTests(f *testing.F) {
	f.Add([]byte("#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n 1024 256 float sum 60.93 0.02 0.03 2e-07 60.42 0.02 0.03 2e-07\n"))
	f.Add([]byte("# size count time busbw\n 8 2 1 0\n 8 2 0.5 0\n 4 x 1 1\n"))
	f.Add([]byte("all_gather_perf\n# size time busbw\n 16 -1 0\n 32 1e309 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ReadNCCLTests(bytes.NewReader(data), "f.txt")
		if err != nil {
			return
		}
		for _, c := range l.Curves {
			for i, p := range c.Points {
				if !(p.TimeNS > 0) || p.Bytes <= 0 || (i > 0 && p.Bytes <= c.Points[i-1].Bytes) {
					t.Fatalf("bad curve %+v", c)
				}
			}
			if got, ok := l.TimeAt("allreduce", 8, 1000); ok && (math.IsNaN(got) || got < 0) {
				t.Fatalf("TimeAt %v", got)
			}
		}
	})
}
