package querylog

import (
	"errors"
	"time"
)

var errNumber = errors.New("not a number")

// count reads a non-negative decimal integer.
func count(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 18 {
		return 0, errNumber
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNumber
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}

// seconds reads "0.000154" (seconds with a fraction) as a duration.
func seconds(b []byte) (time.Duration, error) {
	return decimal(b, time.Second)
}

// decimal reads "12.345" in the given unit, to the nanosecond.
func decimal(b []byte, unit time.Duration) (time.Duration, error) {
	whole, frac := b, []byte(nil)
	for i, c := range b {
		if c == '.' {
			whole, frac = b[:i], b[i+1:]
			break
		}
	}
	w, err := count(whole)
	if err != nil {
		return 0, err
	}
	d := time.Duration(w) * unit
	scale := unit / 10
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, errNumber
		}
		d += time.Duration(c-'0') * scale
		scale /= 10
	}
	return d, nil
}
