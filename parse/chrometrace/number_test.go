package chrometrace

import (
	"math/big"
	"strings"
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

// FuzzParseMicros checks the integer-only parser against exact big-number
// arithmetic on any decimal text it accepts.
func FuzzParseMicros(f *testing.F) {
	for _, s := range []string{"1700000000123.456", "0.0005", "1.5e3", "-7.25", "99999999999.9999",
		// Exponents beyond int64 (big.Rat refuses them; the value is
		// still plain: zero, or far too large, or far too small).
		"0E10000000000000000000", "+0e10000000000000000000", "1e-10000000000000000000", "1e10000000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseMicros(s)
		if !ok {
			return
		}
		want, valid := refMicros(s)
		if !valid {
			t.Fatalf("parseMicros(%q) accepted text that is not a decimal number", s)
		}
		if !want.IsInt64() || want.Int64() != got {
			// Mantissas longer than 17 digits are rounded once at the
			// 18th digit; allow that single-rounding difference of 1 ns.
			d := new(big.Int).Sub(want, big.NewInt(got))
			if d.CmpAbs(big.NewInt(1)) > 0 {
				t.Fatalf("parseMicros(%q) = %d, want %s", s, got, want)
			}
		}
	})
}

// refMicros is the reference for parseMicros: the decimal number of µs in
// s ([sign] digits [. digits] [e [sign] digits], at least one digit before
// the exponent) in ns, rounded half away from zero, with big integers. An
// exponent of any length is read (big.Rat refuses those beyond int64); a
// value of 10^40 ns or more is returned as 10^40.
func refMicros(s string) (*big.Int, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var digits []byte
	frac := 0
	dot := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			goto exp
		}
	}
exp:
	if len(digits) == 0 {
		return nil, false
	}
	e := new(big.Int)
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return nil, false
		}
		if _, ok := e.SetString(s[i+1:], 10); !ok || strings.ContainsAny(s[i+1:], "_xXoObB") {
			return nil, false
		}
	}
	m, _ := new(big.Int).SetString(string(digits), 10)
	if m.Sign() == 0 {
		return m, true
	}
	// value = m × 10^pow ns
	pow := e.Add(e, big.NewInt(int64(3-frac)))
	ten := big.NewInt(10)
	switch {
	case pow.Cmp(big.NewInt(40)) > 0:
		m.Exp(ten, big.NewInt(40), nil)
	case pow.Sign() >= 0:
		m.Mul(m, new(big.Int).Exp(ten, pow, nil))
	case pow.Cmp(big.NewInt(int64(-len(digits)-1))) < 0:
		m.SetInt64(0) // below 0.1 ns
	default:
		d := new(big.Int).Exp(ten, new(big.Int).Neg(pow), nil)
		q, r := m.QuoRem(m, d, new(big.Int))
		if r.Lsh(r, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		m = q
	}
	if neg {
		m.Neg(m)
	}
	return m, true
}
