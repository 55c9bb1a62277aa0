package audit

// LabelAgreement compares one item label (an item is confused or it is not) given by two sources —
// two models, or one model under two protocols — over the same N items.
type LabelAgreement struct {
	Items  int `json:"items"`
	A      int `json:"a"`      // items the first source labels
	B      int `json:"b"`      // items the second source labels
	Both   int `json:"both"`   // labelled by both
	Either int `json:"either"` // labelled by at least one
	// Jaccard = Both / Either (null when neither labels any item).
	Jaccard *float64 `json:"jaccard"`
	// JaccardIndependent is the Jaccard two independent labellings with the same rates would have in
	// expectation, pa·pb / (pa + pb − pa·pb): the baseline a Jaccard is read against.
	JaccardIndependent *float64 `json:"jaccard_independent"`
	// Kappa is Cohen's κ = (po − pe) / (1 − pe), po the observed agreement, pe = pa·pb + (1−pa)(1−pb);
	// null when pe = 1 (both sources give every item the same label).
	Kappa *float64 `json:"kappa"`
	// Flips = Either − Both: items one source labels and the other does not; FlipRate in % of Items.
	Flips    int      `json:"flips"`
	FlipRate *float64 `json:"flip_rate"`
}

// labelAgreement counts the agreement of two labellings of the same items.
func labelAgreement(a, b []bool) LabelAgreement {
	la := LabelAgreement{Items: len(a)}
	for i := range a {
		la.A += b2i(a[i])
		la.B += b2i(b[i])
		la.Both += b2i(a[i] && b[i])
		la.Either += b2i(a[i] || b[i])
	}
	la.Flips = la.Either - la.Both
	la.FlipRate = pct(la.Flips, la.Items)
	if la.Either > 0 {
		j := float64(la.Both) / float64(la.Either)
		la.Jaccard = &j
	}
	if la.Items == 0 {
		return la
	}
	n := float64(la.Items)
	pa, pb := float64(la.A)/n, float64(la.B)/n
	if u := pa + pb - pa*pb; u > 0 {
		e := pa * pb / u
		la.JaccardIndependent = &e
	}
	po := float64(la.Items-la.Flips) / n
	pe := pa*pb + (1-pa)*(1-pb)
	if pe < 1 {
		k := (po - pe) / (1 - pe)
		la.Kappa = &k
	}
	return la
}
