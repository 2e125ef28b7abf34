package chrometrace

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// doneSet records the stretches Options.Done is told of.
type doneSet struct {
	mu  sync.Mutex
	got [][2]int64
}

func (d *doneSet) add(from, to int64) {
	d.mu.Lock()
	d.got = append(d.got, [2]int64{from, to})
	d.mu.Unlock()
}

// covers checks that the stretches lie in [0, n) and cover it: every
// window read in place was let go of (its pages may be dropped).
func (d *doneSet) covers(n int) error {
	s := slices.Clone(d.got)
	slices.SortFunc(s, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	var end int64
	for _, r := range s {
		if r[0] < 0 || r[1] > int64(n) || r[0] > r[1] {
			return fmt.Errorf("stretch [%d, %d) outside the %d bytes", r[0], r[1], n)
		}
		if r[0] > end {
			return fmt.Errorf("bytes [%d, %d) never let go of", end, r[0])
		}
		end = max(end, r[1])
	}
	if end != int64(n) {
		return fmt.Errorf("bytes [%d, %d) never let go of (%d stretches)", end, n, len(s))
	}
	return nil
}

// TestDataNotReferenced: nothing of a trace read in place refers to the
// data, which a mapped file's is unmapped after Parse returns. Every
// string and slice reachable from the trace is checked, on fixtures with
// metadata, collectives, attributes and anomalies.
func TestDataNotReferenced(t *testing.T) {
	for _, f := range fixtures(t) {
		data := readFile(t, f)
		for _, opt := range []Options{{Data: data}, {Data: data, NoChunks: true, BlockSize: 1 << 10}} {
			tr, err := Parse(nil, opt)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
			if where := pointsInto(reflect.ValueOf(tr), lo, lo+uintptr(len(data)), "trace", map[uintptr]bool{}); where != "" {
				t.Errorf("%s (chunks %v): %s refers to the data read in place", f, !opt.NoChunks, where)
			}
		}
	}
}

// pointsInto returns the path of a string or slice reachable from v whose
// bytes lie in [lo, hi), or "".
func pointsInto(v reflect.Value, lo, hi uintptr, path string, seen map[uintptr]bool) string {
	in := func(p uintptr) bool { return p >= lo && p < hi }
	switch v.Kind() {
	case reflect.String:
		if v.Len() > 0 && in(uintptr(unsafe.Pointer(unsafe.StringData(v.String())))) {
			return path
		}
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return ""
		}
		seen[v.Pointer()] = true
		return pointsInto(v.Elem(), lo, hi, path, seen)
	case reflect.Interface:
		if !v.IsNil() {
			return pointsInto(v.Elem(), lo, hi, path, seen)
		}
	case reflect.Slice:
		if v.Cap() > 0 && in(v.Pointer()) {
			return path
		}
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			if w := pointsInto(v.Index(i), lo, hi, fmt.Sprintf("%s[%d]", path, i), seen); w != "" {
				return w
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if w := pointsInto(v.Field(i), lo, hi, path+"."+v.Type().Field(i).Name, seen); w != "" {
				return w
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if w := pointsInto(it.Key(), lo, hi, path+"{key}", seen); w != "" {
				return w
			}
			if w := pointsInto(it.Value(), lo, hi, fmt.Sprintf("%s[%v]", path, it.Key()), seen); w != "" {
				return w
			}
		}
	}
	return ""
}
