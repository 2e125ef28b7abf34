package chart

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/gpuspec"
	"github.com/traceq/traceq/internal/golden"
	"github.com/traceq/traceq/opcost"
	"github.com/traceq/traceq/step"
)

// rooflineResult is a small hand-made efficiency result on a B200: GEMMs
// of a prefill (compute-bound) and a decode (memory-bound), an attention,
// an fp8 GEMM, a memory-only op and an op on an unknown device.
func rooflineResult(t *testing.T) *efficiency.Result {
	b200, err := gpuspec.Default().Lookup("B200")
	if err != nil {
		t.Fatal(err)
	}
	cat := func(s string) classify.Category { return classify.MustCategory(s) }
	op := func(name string, flops, bytes, ns int64, c string, dt gpuspec.DType) efficiency.OpRow {
		return efficiency.OpRow{Run: "r", Device: 0, Name: name, Category: cat(c), Instances: 1, KernelNS: ns, FLOPs: flops, Bytes: bytes,
			Modelled: true, Model: opcost.GEMM, DType: dt}
	}
	return &efficiency.Result{
		Devices: []efficiency.Device{{Run: "r", Device: 0, Name: "NVIDIA B200", SMs: 148, Spec: b200}, {Run: "r", Device: 1, Name: "x"}},
		Ops: []efficiency.OpRow{
			op("aten::addmm", 3_273_523_200, 9_939_200, 8_000, "gemm/cublaslt_nvjet", gpuspec.BF16),
			op("aten::mm", 536_870_912, 33_816_576, 12_000, "gemm/cublas", gpuspec.BF16),
			op("_C::marlin_gemm", 1_442_840_576, 23_734_336, 6_000, "gemm/marlin", gpuspec.BF16),
			op("aten::_scaled_dot_product_flash_attention", 1_099_511_627_776, 536_870_912, 900_000, "attention/fa2", gpuspec.BF16),
			op("aten::_scaled_mm", 33_554_432, 294_920, 4_000, "gemm/cutlass", gpuspec.FP8),
			{Run: "r", Device: 0, Name: "_C::fused_add_rms_norm", Category: cat("norm/norm"), KernelNS: 3_000, Bytes: 20_465_280, Modelled: true, Model: opcost.Memory},
			{Run: "r", Device: 1, Name: "aten::mm", Category: cat("gemm/cublas"), KernelNS: 5_000, FLOPs: 10, Bytes: 10, Modelled: true},
		},
		Steps: []efficiency.StepRow{{Run: "r", Class: step.WholeTrace}},
	}
}

func TestRooflineGolden(t *testing.T) {
	r := rooflineResult(t)
	var a, b bytes.Buffer
	if err := Roofline(&a, r, Options{Title: "hand-made"}); err != nil {
		t.Fatal(err)
	}
	if err := Roofline(&b, r, Options{Title: "hand-made"}); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two drawings differ")
	}
	golden.Check(t, filepath.Join("testdata", "roofline.golden.svg"), a.Bytes())
	s := a.String()
	for _, want := range []string{"bf16 peak 2250 (halved) TFLOP/s", "fp8 peak 4500 (halved) TFLOP/s", "memory 7.7 TB/s",
		"1. aten::_scaled_dot_product_flash_attent", "1 op shape (0.003 ms) without FLOPs", "1 op shape (0.005 ms) on devices of other rows", "5. aten::_scaled_mm (fp8)"} {
		if !strings.Contains(s, want) {
			t.Errorf("roofline SVG lacks %q", want)
		}
	}
}

// The figure's points sit where the definitions put them: intensity =
// FLOPs/bytes, achieved = FLOPs/kernel time; largest first.
func TestRooflinePoints(t *testing.T) {
	_, l, err := rooflineFigure(rooflineResult(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.points) != 5 || l.points[0].label != "aten::_scaled_dot_product_flash_attention (bf16)" {
		t.Fatalf("points %+v", l.points)
	}
	p := l.points[0]
	if p.x != 1_099_511_627_776.0/536_870_912 || p.y != 1_099_511_627_776.0/900_000/1e3 {
		t.Errorf("attention at (%v, %v)", p.x, p.y)
	}
	if _, _, err := rooflineFigure(&efficiency.Result{Devices: []efficiency.Device{{Name: "x"}}}, Options{}); err == nil {
		t.Error("no device row: no error")
	}
}

// Nothing to draw is ErrNoRoofline, and RooflineDrawable says so
// beforehand; a device row without a peak for the types drawn still gets
// its memory roof (across the chart) and no panic.
func TestRooflineNothingOrNoPeak(t *testing.T) {
	r := rooflineResult(t)
	if !RooflineDrawable(r) {
		t.Error("hand-made result: not drawable")
	}
	for name, res := range map[string]*efficiency.Result{
		"no device row": {Devices: []efficiency.Device{{Name: "x"}}},
		"memory only":   {Devices: r.Devices, Ops: r.Ops[5:6]},
	} {
		if RooflineDrawable(res) {
			t.Errorf("%s: drawable", name)
		}
		if err := Roofline(&bytes.Buffer{}, res, Options{}); !errors.Is(err, ErrNoRoofline) {
			t.Errorf("%s: error %v, want ErrNoRoofline", name, err)
		}
	}
	gpus, err := gpuspec.Parse(strings.NewReader("gpu Bare\nsms 10\nmemory 2\nsource s\n"), "x.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	bare := &efficiency.Result{Devices: []efficiency.Device{{Run: "r", Name: "Bare", Spec: &gpus[0]}}, Ops: r.Ops[:1]}
	_, l, err := rooflineFigure(bare, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.roofs) != 1 || l.roofs[0].x1 != l.xmax || l.roofs[0].y1 != 2*l.xmax || l.ymax < l.roofs[0].y1 {
		t.Errorf("memory roof alone: %+v (x %v, y %v)", l.roofs, l.xmax, l.ymax)
	}
}
