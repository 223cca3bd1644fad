package querylog

import "time"

// The logs' clocks are read by hand: time.Parse per line would cost more than the rest
// of a line's parsing together.

// digits reads b[i:i+n] as a decimal number; ok is false if any byte is not a digit.
func digits(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// fraction reads ".ddd..." at b[i:], returning nanoseconds and the bytes it used.
func fraction(b []byte, i int) (ns, n int) {
	if i >= len(b) || b[i] != '.' {
		return 0, 0
	}
	j, scale := i+1, 100000000
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		ns += int(b[j]-'0') * scale
		scale /= 10
		j++
	}
	if j == i+1 {
		return 0, 0
	}
	return ns, j - i
}

// date reads "YYYY-MM-DD?HH:MM:SS" at the start of b (sep is the byte between date and
// time) and the fraction after it; rest is what follows.
func date(b []byte, sep byte) (t time.Time, rest []byte, ok bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != sep || b[13] != ':' || b[16] != ':' {
		return time.Time{}, nil, false
	}
	y, ok1 := digits(b, 0, 4)
	mo, ok2 := digits(b, 5, 2)
	d, ok3 := digits(b, 8, 2)
	h, ok4 := digits(b, 11, 2)
	mi, ok5 := digits(b, 14, 2)
	s, ok6 := digits(b, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, nil, false
	}
	ns, n := fraction(b, 19)
	return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC), b[19+n:], true
}

// offset reads a numeric zone ("Z", "+02", "+0530", "-03:30") at the start of b and
// returns it as seconds east of UTC.
func offset(b []byte) (secs int, n int, ok bool) {
	if len(b) > 0 && b[0] == 'Z' {
		return 0, 1, true
	}
	if len(b) < 3 || (b[0] != '+' && b[0] != '-') {
		return 0, 0, false
	}
	h, okh := digits(b, 1, 2)
	if !okh {
		return 0, 0, false
	}
	n, m := 3, 0
	if len(b) > 3 && b[3] == ':' {
		n++
	}
	if mm, okm := digits(b, n, 2); okm {
		m, n = mm, n+2
	} else if n == 4 {
		return 0, 0, false
	}
	secs = h*3600 + m*60
	if b[0] == '-' {
		secs = -secs
	}
	return secs, n, true
}

// isoTime reads MySQL's "2024-01-02T03:04:05.123456Z" (or "+02:00" for
// log_timestamps=SYSTEM) at the start of b.
func isoTime(b []byte) (time.Time, []byte, bool) {
	t, rest, ok := date(b, 'T')
	if !ok {
		return time.Time{}, nil, false
	}
	off, n, ok := offset(rest)
	if !ok {
		return time.Time{}, nil, false
	}
	return t.Add(-time.Duration(off) * time.Second), rest[n:], true
}

// pgTime reads PostgreSQL's %m, "2024-01-02 03:04:05.678 UTC", at the start of b. A
// numeric zone is applied; a zone name other than UTC/GMT (CET, EST, ...) cannot be
// resolved without the server's timezone database, so its clock is taken as printed,
// as pgreplay does: offsets stay right except across a daylight-saving change.
func pgTime(b []byte) (time.Time, []byte, bool) {
	t, rest, ok := date(b, ' ')
	if !ok || len(rest) < 2 || rest[0] != ' ' {
		return time.Time{}, nil, false
	}
	rest = rest[1:]
	if off, n, ok := offset(rest); ok && (n == len(rest) || rest[n] == '|' || rest[n] == ',' || rest[n] == ' ') {
		return t.Add(-time.Duration(off) * time.Second), rest[n:], true
	}
	n := 0
	for n < len(rest) && (rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z') {
		n++
	}
	if n == 0 {
		return time.Time{}, nil, false
	}
	return t, rest[n:], true
}

// mariaTime reads the MariaDB general and slow log's "YYMMDD HH:MM:SS" (the hour padded
// with a space: "261208  0:11:56"). The log prints no zone; the clock is taken as UTC,
// which keeps offsets right except across a daylight-saving change.
func mariaTime(b []byte) (time.Time, bool) {
	if len(b) < 15 || b[6] != ' ' || b[9] != ':' || b[12] != ':' {
		return time.Time{}, false
	}
	y, ok1 := digits(b, 0, 2)
	mo, ok2 := digits(b, 2, 2)
	d, ok3 := digits(b, 4, 2)
	hb := [2]byte{b[7], b[8]}
	if hb[0] == ' ' {
		hb[0] = '0'
	}
	h, ok4 := digits(hb[:], 0, 2)
	mi, ok5 := digits(b, 10, 2)
	s, ok6 := digits(b, 13, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, false
	}
	return time.Date(2000+y, time.Month(mo), d, h, mi, s, 0, time.UTC), true
}
