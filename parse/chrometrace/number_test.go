package chrometrace

import (
	"math/big"
	"testing"
)

func TestParseMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1000, true},
		{"1.5", 1500, true},
		{"2.408598", 2409, true}, // 2408.598 ns rounds half-up
		{"1700000000123.456", 1700000000123456, true},
		{"6520618853487.683", 6520618853487683, true},
		{"1712195495984501.2", 1712195495984501200, true},
		{"1623142623460111", 1623142623460111000, true},
		{"-3.25", -3250, true},
		{"0.0005", 1, true},
		{"0.0004", 0, true},
		{"1.5e3", 1500000, true},
		{"2E-3", 2, true},
		{"1e-9", 0, true},
		{"12345678901234567890", 0, false}, // overflows int64 ns
		{"", 0, false},
		{"-", 0, false},
		{".", 0, false},
		{"1.", 0, false},
		{"abc", 0, false},
		{"1.2.3", 0, false},
		{"1e", 0, false},
		{"1x", 0, false},
	} {
		got, ok := parseMicros(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMicros(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseMicros checks the integer-only parser against math/big on any
// decimal text it accepts.
func FuzzParseMicros(f *testing.F) {
	for _, s := range []string{"1700000000123.456", "0.0005", "1.5e3", "-7.25", "99999999999.9999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseMicros(s)
		if !ok {
			return
		}
		r, rok := new(big.Rat).SetString(s)
		if !rok {
			t.Fatalf("parseMicros(%q) accepted text big.Rat rejects", s)
		}
		r.Mul(r, big.NewRat(1000, 1))
		// round half away from zero
		num, den := new(big.Int).Set(r.Num()), r.Denom()
		neg := num.Sign() < 0
		num.Abs(num)
		q, m := new(big.Int).QuoRem(num, den, new(big.Int))
		if new(big.Int).Mul(m, big.NewInt(2)).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		if neg {
			q.Neg(q)
		}
		if !q.IsInt64() || q.Int64() != got {
			// Mantissas longer than 17 digits are rounded once at the
			// 18th digit; allow that single-rounding difference of 1 ns.
			d := new(big.Int).Sub(q, big.NewInt(got))
			if d.CmpAbs(big.NewInt(1)) > 0 {
				t.Fatalf("parseMicros(%q) = %d, want %s", s, got, q)
			}
		}
	})
}
