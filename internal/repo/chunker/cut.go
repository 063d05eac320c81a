package chunker

// Cut returns the length of the first chunk of data under gear table g and
// parameters p (see the package documentation for the exact rule). The
// result is len(data) if len(data) <= p.Min, and otherwise between p.Min+1
// and min(len(data), p.Max). A result equal to len(data) < p.Max is only a
// real boundary if data is the end of the stream. p must be valid (see
// Params.Validate); Cut does not check it.
func Cut(data []byte, g *Gear, p Params) int {
	n := len(data)
	if n <= p.Min {
		return n
	}
	if n > p.Max {
		n = p.Max
	}
	normal := min(p.Avg, n)
	strict, loose := masks(p.Avg)
	var fp uint64
	i, fp, found := scan(data, p.Min, normal, fp, strict, g)
	if found {
		return i
	}
	i, _, found = scan(data, normal, n, fp, loose, g)
	if found {
		return i
	}
	return n
}

// scan rolls the fingerprint fp over data[from:to], two bytes at a time
// (FastCDC's "rolling two bytes": one shift per two bytes, the first byte
// tested against the mask shifted left by one, which is exact because bit 63
// of the mask is clear). It returns the chunk length and true at the first
// byte whose fingerprint has no bit of mask set, or (to, fp, false).
func scan(data []byte, from, to int, fp, mask uint64, g *Gear) (int, uint64, bool) {
	tab, sh := &g.table, &g.shifted
	mask2 := mask << 1
	d := data[from:to]
	// i indexes the second byte of each pair; this loop form lets the
	// compiler prove both indexes in bounds.
	i := 1
	for ; i < len(d); i += 2 {
		fp = fp<<2 + sh[d[i-1]]
		if fp&mask2 == 0 {
			return from + i, fp, true
		}
		fp += tab[d[i]]
		if fp&mask == 0 {
			return from + i + 1, fp, true
		}
	}
	if i == len(d) { // one byte left over
		fp = fp<<1 + tab[d[i-1]]
		if fp&mask == 0 {
			return to, fp, true
		}
	}
	return to, fp, false
}
