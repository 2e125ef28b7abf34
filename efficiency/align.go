package efficiency

// align pairs a replayed graph's kernels with captured launches
// (docs/definitions.md#cuda-graph-replays): a semi-global alignment in
// which every replayed kernel is placed (matched to a captured launch of
// the same kernel, or left unmatched) and the captured sequence may
// start and end anywhere, so that one graph is found among the launches
// of a capture trace that holds several, and a few kernels more or fewer
// on either side (a replay of 425 kernels against a capture of 428
// launches) cost only themselves.
//
// Score: a match +2, a replayed kernel left unmatched −1, a captured
// launch skipped inside the aligned stretch −1. eq reports whether
// replayed kernel i may match captured launch j. It returns, for each
// replayed kernel, the index of its captured launch or -1, the number
// matched, and the score.
func align(nr, ns int, eq func(i, j int) bool) (pair []int32, matched int, score int32) {
	const (
		match = 2
		gap   = -1
	)
	pair = make([]int32, nr)
	for i := range pair {
		pair[i] = -1
	}
	if nr == 0 || ns == 0 {
		return pair, 0, int32(gap * nr)
	}
	// from[i][j]: how cell (i, j) was reached: 0 diagonal (a match),
	// 1 from above (replayed kernel i-1 unmatched), 2 from the left
	// (captured launch j-1 skipped), 3 a free start (i = 0).
	w := ns + 1
	from := make([]uint8, (nr+1)*w)
	prev, cur := make([]int32, w), make([]int32, w)
	for j := range prev {
		prev[j] = 0
		from[j] = 3
	}
	for i := 1; i <= nr; i++ {
		cur[0] = prev[0] + gap
		from[i*w] = 1
		for j := 1; j <= ns; j++ {
			best, how := prev[j]+gap, uint8(1)
			if v := cur[j-1] + gap; v > best {
				best, how = v, 2
			}
			if eq(i-1, j-1) {
				if v := prev[j-1] + match; v >= best {
					best, how = v, 0
				}
			}
			cur[j], from[i*w+j] = best, how
		}
		prev, cur = cur, prev
	}
	// Free end: the best cell of the last row (the first on a tie).
	end := 0
	for j := 1; j <= ns; j++ {
		if prev[j] > prev[end] {
			end = j
		}
	}
	score = prev[end]
	i, j := nr, end
	for i > 0 {
		switch from[i*w+j] {
		case 0:
			pair[i-1] = int32(j - 1)
			matched++
			i, j = i-1, j-1
		case 1:
			i--
		case 2:
			j--
		}
	}
	return pair, matched, score
}
