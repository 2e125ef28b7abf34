package classify

import "testing"

func benchNames(b *testing.B) ([]string, int64) {
	var names []string
	var n int64
	for _, r := range readCorpus(b, corpusFiles[0]) { // labelled.tsv, as the recorded figures
		names = append(names, r.name)
		n += int64(len(r.name))
	}
	return names, n
}

// BenchmarkClassify measures throughput in name bytes per second over the
// labelled corpus: "uncached" runs the rule table for every name (the cost
// of the first sight of each distinct name in a trace), "cached" is the
// steady state of a trace with millions of events and few distinct names.
func BenchmarkClassify(b *testing.B) {
	names, size := benchNames(b)
	c := Default()
	b.Run("uncached", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, n := range names {
				c.matchRule(n)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for _, n := range names {
			c.Classify(n)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, n := range names {
				c.Classify(n)
			}
		}
	})
}

// BenchmarkClassifyLong is one uncached ~1 KB ATen template name that
// reaches the end of the table (elementwise/aten).
func BenchmarkClassifyLong(b *testing.B) {
	name := "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(bool, float, float)#1}, std::array<char*, 4ul> >(int, at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(bool, float, float)#1}, std::array<char*, 4ul>)"
	for len(name) < 1024 {
		name += ", at::native::memory::LoadWithoutCast, at::native::memory::StoreWithoutCast"
	}
	c := Default()
	b.SetBytes(int64(len(name)))
	for b.Loop() {
		c.matchRule(name)
	}
}
