package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// refActivity is a GPU activity read by the reference reader, which shares
// no code with traceq's parser: encoding/json with exact decimal numbers
// and math/big arithmetic.
type refActivity struct {
	device     int64
	start, end int64
	kernel     bool
}

// refNS converts a decimal µs number to ns, rounding half away from zero.
func refNS(t *testing.T, n json.Number) int64 {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	num := new(big.Int).Set(r.Num())
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if m.Mul(m, big.NewInt(2)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q.Int64()
}

func refRead(t *testing.T, path string) []refActivity {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []refActivity
	for _, ev := range doc.TraceEvents {
		if ev["ph"] != "X" {
			continue
		}
		cat, _ := ev["cat"].(string)
		kernel := cat == "kernel" || cat == "Kernel"
		if !kernel && cat != "gpu_memcpy" && cat != "gpu_memset" && cat != "Memcpy" && cat != "Memset" {
			continue
		}
		args, _ := ev["args"].(map[string]any)
		devNum, ok := args["device"].(json.Number)
		if !ok {
			devNum = ev["pid"].(json.Number)
		}
		dev, err := devNum.Int64()
		if err != nil {
			t.Fatal(err)
		}
		start := refNS(t, ev["ts"].(json.Number))
		dur := refNS(t, ev["dur"].(json.Number))
		out = append(out, refActivity{device: dev, start: start, end: start + max(dur, 0), kernel: kernel})
	}
	return out
}

type refDevice struct {
	kernel, busy, span int64
	n, kernels         int64
}

// refTotals computes per-device kernel time (sum), busy time (union of
// intervals, by sorting and sweeping) and span.
func refTotals(acts []refActivity) map[int64]*refDevice {
	byDev := map[int64][]refActivity{}
	for _, a := range acts {
		byDev[a.device] = append(byDev[a.device], a)
	}
	out := map[int64]*refDevice{}
	for dev, as := range byDev {
		slices.SortFunc(as, func(a, b refActivity) int { return int(a.start - b.start) })
		d := &refDevice{}
		first, last := as[0].start, as[0].end
		curS, curE := as[0].start, as[0].end
		for i, a := range as {
			d.kernel += a.end - a.start
			d.n++
			if a.kernel {
				d.kernels++
			}
			last = max(last, a.end)
			if i == 0 {
				continue
			}
			if a.start > curE {
				d.busy += curE - curS
				curS, curE = a.start, a.end
			} else {
				curE = max(curE, a.end)
			}
		}
		d.busy += curE - curS
		d.span = last - first
		out[dev] = d
	}
	return out
}

// TestBreakdownMatchesReference checks traceq's per-device totals on real
// traces against the independent reader above.
func TestBreakdownMatchesReference(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/traces/torch/*.json*")
	files = append(files, "../../testdata/traces/torch/dlrm8/rank3.json.gz")
	for _, path := range files {
		if filepath.Base(path) == "hta_cpu_only.json.gz" {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"traceq", "breakdown", "--no-steps", "--format", "json", path}, nil, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var rep struct {
				Groups []struct {
					Device     int64  `json:"device"`
					StepKind   string `json:"step_kind"`
					KernelNS   int64  `json:"kernel_ns"`
					BusyNS     int64  `json:"busy_ns"`
					SpanNS     int64  `json:"span_ns"`
					Categories []struct {
						KernelNS  int64 `json:"kernel_ns"`
						Instances int64 `json:"instances"`
					} `json:"categories"`
				} `json:"groups"`
				Kernels []struct {
					Instances int64 `json:"instances"`
					TotalNS   int64 `json:"total_ns"`
				} `json:"kernels"`
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			ref := refTotals(refRead(t, path))
			var allKernel, allN int64
			seen := map[int64]bool{}
			for _, g := range rep.Groups {
				if g.StepKind != "all" {
					t.Fatalf("--no-steps gave a group of step kind %q", g.StepKind)
				}
				d := ref[g.Device]
				if d == nil {
					t.Fatalf("device %d not in reference", g.Device)
				}
				seen[g.Device] = true
				if g.KernelNS != d.kernel || g.BusyNS != d.busy || g.SpanNS != d.span {
					t.Errorf("device %d: kernel/busy/span = %d/%d/%d, reference %d/%d/%d",
						g.Device, g.KernelNS, g.BusyNS, g.SpanNS, d.kernel, d.busy, d.span)
				}
				var ck, cn int64
				for _, c := range g.Categories {
					ck += c.KernelNS
					cn += c.Instances
				}
				if ck != d.kernel || cn != d.n {
					t.Errorf("device %d: categories sum to %d ns over %d activities, reference %d ns over %d", g.Device, ck, cn, d.kernel, d.n)
				}
				allKernel += d.kernel
				allN += d.n
			}
			if len(seen) != len(ref) {
				t.Errorf("report has %d devices, reference %d", len(seen), len(ref))
			}
			var kk, kn int64
			for _, k := range rep.Kernels {
				kk += k.TotalNS
				kn += k.Instances
			}
			if kk != allKernel || kn != allN {
				t.Errorf("kernel table sums to %d ns over %d, reference %d over %d", kk, kn, allKernel, allN)
			}
		})
	}
}
