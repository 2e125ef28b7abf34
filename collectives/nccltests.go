package collectives

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/traceq/traceq/interconnect"
)

// Curve is what nccl-tests measured for one collective on one machine:
// the time of an operation at each message size (its `size` column, the
// same convention as Size.Bytes), the better of out-of-place and
// in-place.
type Curve struct {
	// Op is the collective in the sub-category vocabulary ("allreduce"),
	// from the test's name (all_reduce_perf) in the output; "" when the
	// output does not name it.
	Op string
	// Ranks is the number of ranks nccl-tests ran on (its "Using devices"
	// list); 0 when the output does not list them.
	Ranks  int
	Points []Point // by size, ascending
	// Factor is nccl-tests' bus factor of the run (busbw / algbw, read
	// from its largest size); 1 when it cannot be told.
	Factor float64
}

// Point is one size of a Curve.
type Point struct {
	Bytes   int64
	TimeNS  float64 // the operation's time
	BusGBps float64 // nccl-tests' busbw
}

// PeakBusGBps is the highest busbw of the curve.
func (c *Curve) PeakBusGBps() float64 {
	var best float64
	for _, p := range c.Points {
		best = max(best, p.BusGBps)
	}
	return best
}

// timeAt is the time nccl-tests' operation would take at bytes:
// interpolated linearly between the measured sizes (time = α + size/β
// between two sizes); below the smallest size, the smallest size's time
// (the latency floor); above the largest, the largest size's bandwidth.
func (c *Curve) timeAt(bytes int64) float64 {
	ps := c.Points
	i, found := slices.BinarySearchFunc(ps, bytes, func(p Point, b int64) int {
		switch {
		case p.Bytes < b:
			return -1
		case p.Bytes > b:
			return 1
		}
		return 0
	})
	switch {
	case found:
		return ps[i].TimeNS
	case i == 0:
		return ps[0].TimeNS
	case i == len(ps):
		last := ps[len(ps)-1]
		return last.TimeNS * float64(bytes) / float64(last.Bytes)
	}
	lo, hi := ps[i-1], ps[i]
	f := float64(bytes-lo.Bytes) / float64(hi.Bytes-lo.Bytes)
	return lo.TimeNS + f*(hi.TimeNS-lo.TimeNS)
}

// ErrNoNCCLTests is ReadNCCLTests' error for a file without a table.
var ErrNoNCCLTests = errors.New("no nccl-tests table (a header with size, time and busbw columns, then rows) found")

// testOps maps nccl-tests' binaries to the collectives they time.
var testOps = map[string]string{
	"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce_scatter",
	"alltoall": "all_to_all", "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "send_recv",
}

var testName = regexp.MustCompile(`\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv|hypercube|gather|scatter)_perf`)

// maxNCCLTestsLine bounds a line of an nccl-tests output (its device
// lists are the longest: a few hundred bytes).
const maxNCCLTestsLine = 1 << 20

// ReadNCCLTests reads the output of nccl-tests (all_reduce_perf and its
// friends; several tests one after another are several curves) and
// returns the link it measured: per collective, the time at each message
// size. Both layouts are read, by their header: nccl-tests ≥ 2.13
// (`size count type redop root time algbw busbw #wrong …`) and the older
// one (`… redop time algbw busbw error …`, or no redop). name is what
// the link is called in the output (the file's base name).
func ReadNCCLTests(r io.Reader, name string) (*Link, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxNCCLTestsLine)
	var curves []*Curve
	var cur *Curve
	op, ranks := "", 0
	var sizeCol, countCol int
	var timeCols, busCols []int
	var algCol int
	header := false
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if m := testName.FindStringSubmatch(l); m != nil {
			// A new test: its rows make a new curve.
			op, cur, ranks = testOps[m[1]], nil, 0
		}
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			f := strings.Fields(strings.TrimPrefix(t, "#"))
			if len(f) > 1 && f[0] == "Rank" {
				ranks++
			}
			if slices.Contains(f, "size") && slices.Contains(f, "time") && slices.Contains(f, "busbw") {
				header, timeCols, busCols, algCol, countCol = true, nil, nil, -1, -1
				for i, w := range f {
					switch w {
					case "size":
						sizeCol = i
					case "count":
						countCol = i
					case "time":
						timeCols = append(timeCols, i)
					case "busbw":
						busCols = append(busCols, i)
					case "algbw":
						if algCol < 0 {
							algCol = i
						}
					}
				}
				cur = nil
			}
			continue
		}
		if !header || t == "" {
			continue
		}
		f := strings.Fields(t)
		if len(f) <= timeCols[0] || len(f) <= busCols[0] {
			continue
		}
		size, err := strconv.ParseInt(f[sizeCol], 10, 64)
		if err != nil || size <= 0 {
			continue
		}
		if countCol >= 0 {
			if _, err := strconv.ParseInt(f[countCol], 10, 64); err != nil {
				continue
			}
		}
		p := Point{Bytes: size, TimeNS: math.Inf(1)}
		for i, c := range timeCols {
			if c >= len(f) {
				break
			}
			us, err := strconv.ParseFloat(f[c], 64)
			if err != nil || !(us > 0) || math.IsInf(us, 0) {
				continue
			}
			if us*1000 < p.TimeNS {
				p.TimeNS = us * 1000
				if i < len(busCols) && busCols[i] < len(f) {
					p.BusGBps, _ = strconv.ParseFloat(f[busCols[i]], 64)
				}
			}
		}
		if math.IsInf(p.TimeNS, 1) {
			continue
		}
		if cur == nil {
			cur = &Curve{Op: op, Ranks: ranks, Factor: 1}
			curves = append(curves, cur)
		}
		if j := len(cur.Points) - 1; j >= 0 && cur.Points[j].Bytes == size {
			if p.TimeNS < cur.Points[j].TimeNS {
				cur.Points[j] = p
			}
			continue
		}
		cur.Points = append(cur.Points, p)
		if algCol >= 0 && algCol < len(f) {
			// The bus factor from the largest size so far: its figures
			// have the most digits.
			alg, err1 := strconv.ParseFloat(f[algCol], 64)
			bus, err2 := strconv.ParseFloat(f[busCols[0]], 64)
			if err1 == nil && err2 == nil && alg > 0 && bus > 0 {
				cur.Factor = bus / alg
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes: not an nccl-tests output", name, line+1, maxNCCLTestsLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &Link{Link: interconnect.Link{Name: "nccl-tests"}, Source: name}
	for _, c := range curves {
		slices.SortFunc(c.Points, func(a, b Point) int { return int(sign(a.Bytes - b.Bytes)) })
		c.Points = slices.CompactFunc(c.Points, func(a, b Point) bool { return a.Bytes == b.Bytes })
		if len(c.Points) == 0 {
			continue
		}
		l.Curves = append(l.Curves, *c)
		l.GBps = max(l.GBps, c.PeakBusGBps())
	}
	if len(l.Curves) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrNoNCCLTests)
	}
	var ops []string
	for _, c := range l.Curves {
		n := "an unnamed test"
		if c.Op != "" {
			n = c.Op
		}
		ops = append(ops, fmt.Sprintf("%s (%d sizes)", n, len(c.Points)))
	}
	l.About = "the busbw nccl-tests measured in " + filepath.Base(name) + " at each message size: " + strings.Join(ops, ", ")
	return l, nil
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// curve is the measured curve for op: its own, else, when the output
// measured one collective only or did not name it, that one (busbw is
// comparable across collectives: nccl-tests' factors make it so).
func (l *Link) curve(op string) *Curve {
	for i := range l.Curves {
		if l.Curves[i].Op == op {
			return &l.Curves[i]
		}
	}
	if len(l.Curves) == 1 {
		return &l.Curves[0]
	}
	for i := range l.Curves {
		if l.Curves[i].Op == "" {
			return &l.Curves[i]
		}
	}
	return nil
}

// TimeAt is the time an instance of op over n ranks moving bytes (its
// message size) would take at the link: for a measured link (nccl-tests),
// the measured time at that size, scaled by the ratio of the two bus
// factors when the group sizes or collectives differ; for a link given
// as a bandwidth, its bus bytes over that bandwidth. ok is false when it
// cannot be told: no bus factor for op or n, or no curve for op.
func (l *Link) TimeAt(op string, n int, bytes int64) (ns float64, ok bool) {
	f, ok := busFactor(op, n)
	if !ok || bytes < 0 {
		return 0, false
	}
	if len(l.Curves) > 0 {
		c := l.curve(op)
		if c == nil {
			return 0, false
		}
		return c.timeAt(bytes) * f / c.Factor, true
	}
	if !(l.GBps > 0) {
		return 0, false
	}
	return float64(bytes) * f / l.GBps, true
}

// Measured reports whether the link is a measurement (nccl-tests) rather
// than a bandwidth.
func (l *Link) Measured() bool { return len(l.Curves) > 0 }
