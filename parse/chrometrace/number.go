package chrometrace

// parseMicros converts a JSON number (or the text of a numeric string) that
// counts microseconds into integer nanoseconds, rounding half away from zero.
//
// Kineto writes "ts" as "{µs}.{ns:03}": 19 significant digits, more than a
// float64 holds, so the text is read digit by digit and never through a
// float. Exponents ("1.5e3") are accepted for hand-written traces.
func parseMicros(s string) (int64, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	// Fast path: digits, optional '.', up to 3+ fraction digits, no exponent.
	var ip int64
	nd := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if ip > (1<<63-1-9)/10/1000 {
			return slowMicros(s)
		}
		ip = ip*10 + int64(s[i]-'0')
		nd++
	}
	var frac int64
	fd := 0
	round := false
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			switch {
			case fd < 3:
				frac = frac*10 + int64(s[i]-'0')
			case fd == 3:
				round = s[i] >= '5'
			}
			fd++
		}
		if fd == 0 {
			return 0, false
		}
	}
	if nd == 0 && fd == 0 {
		return 0, false
	}
	if i < len(s) {
		if s[i] == 'e' || s[i] == 'E' {
			return slowMicros(s)
		}
		return 0, false
	}
	for k := min(fd, 3); k < 3; k++ {
		frac *= 10
	}
	ns := ip*1000 + frac
	if round {
		ns++
	}
	if neg {
		ns = -ns
	}
	return ns, true
}

// slowMicros handles exponents and very long mantissas: value =
// mantissa × 10^exp µs, computed with integer arithmetic only.
func slowMicros(s string) (int64, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var mant uint64
	exp := 0 // decimal exponent applied to mant
	digits := 0
	sawDot := false
	roundDigit := -1 // first digit dropped from mant
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if mant < 1e17 {
				mant = mant*10 + uint64(c-'0')
				if sawDot {
					exp--
				}
			} else {
				if roundDigit < 0 {
					roundDigit = int(c - '0')
				}
				if !sawDot {
					exp++
				}
			}
		case c == '.' && !sawDot:
			sawDot = true
		default:
			goto tail
		}
	}
tail:
	if digits == 0 {
		return 0, false
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return 0, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, false
		}
		e := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			if e < 10000 {
				e = e*10 + int(c-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	exp += 3 // µs -> ns
	if mant == 0 {
		return 0, true
	}
	for exp > 0 {
		if mant > (1<<63-1)/10 {
			return 0, false // overflows int64 nanoseconds
		}
		mant *= 10
		exp--
	}
	if exp < 0 {
		roundDigit = -1
		for exp < 0 {
			if exp == -1 {
				roundDigit = int(mant % 10)
			}
			mant /= 10
			exp++
			if mant == 0 && exp < -1 {
				return 0, true
			}
		}
	}
	if roundDigit >= 5 {
		mant++
	}
	if mant > 1<<63-1 {
		return 0, false
	}
	v := int64(mant)
	if neg {
		v = -v
	}
	return v, true
}

// parseInt parses a decimal integer (pid, tid, device, stream, correlation);
// a number written with a zero fraction ("7.0") is accepted.
func parseInt(s string) (int64, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var v int64
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			for i++; i < len(s); i++ {
				if s[i] != '0' {
					return 0, false
				}
			}
			break
		}
		if c < '0' || c > '9' || v > (1<<63-1)/10-1 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
