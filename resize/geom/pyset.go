package geom

// CPython 3.11 set iteration order for 2-tuples of small non-negative ints. lmms-eval's internvl3
// iterates set(sorted_ratios), and the InternVL README sorts a set with a stable sort, so candidate
// order (which decides exact aspect ties) is CPython's hash-table order. This reproduces
// Objects/tupleobject.c tuplehash (xxHash-based since 3.8) and Objects/setobject.c set_add_entry /
// set_table_resize / set_insert_clean for a set built by adding keys one by one (no deletions).

const (
	xxPrime1 = 11400714785074694791
	xxPrime2 = 14029467366897019727
	xxPrime5 = 2870177450012600261

	setMinSize     = 8 // PySet_MINSIZE
	setLinearProbe = 9 // LINEAR_PROBES
	setPerturb     = 5 // PERTURB_SHIFT
)

type pair struct{ a, b int }

// tupleHash is hash((a, b)) on a 64-bit CPython ≥ 3.8 for 0 ≤ a, b < 2^61−1 (hash(int) = the int).
func tupleHash(p pair) uint64 {
	acc := uint64(xxPrime5)
	for _, lane := range [2]uint64{uint64(p.a), uint64(p.b)} {
		acc += lane * xxPrime2
		acc = acc<<31 | acc>>33
		acc *= xxPrime1
	}
	acc += 2 ^ (xxPrime5 ^ 3527539)
	if acc == ^uint64(0) { // -1 is reserved for errors
		return 1546275796
	}
	return acc
}

type setEntry struct {
	key  pair
	hash uint64
	used bool
}

// pySet is the open-addressing table of a CPython set of pairs.
type pySet struct {
	table      []setEntry
	fill, used int
}

func newPySet() *pySet { return &pySet{table: make([]setEntry, setMinSize)} }

// add is set_add_entry: probe 10 consecutive slots (when they fit), then perturb.
func (s *pySet) add(k pair) {
	h := tupleHash(k)
	mask := uint64(len(s.table) - 1)
	i := h & mask
	perturb := h
	for {
		probes := 0
		if i+setLinearProbe <= mask {
			probes = setLinearProbe
		}
		for j := uint64(0); j <= uint64(probes); j++ {
			e := &s.table[i+j]
			if !e.used {
				e.key, e.hash, e.used = k, h, true
				s.fill++
				s.used++
				if uint64(s.fill)*5 >= mask*3 {
					s.resize(s.used * 4) // used ≤ 50000 here
				}
				return
			}
			if e.hash == h && e.key == k {
				return
			}
		}
		perturb >>= setPerturb
		i = (i*5 + 1 + perturb) & mask
	}
}

// resize is set_table_resize: the smallest power of two > minused, entries reinserted in table order.
func (s *pySet) resize(minused int) {
	n := setMinSize
	for n <= minused {
		n <<= 1
	}
	old := s.table
	s.table = make([]setEntry, n)
	mask := uint64(n - 1)
	for _, e := range old {
		if !e.used {
			continue
		}
		// set_insert_clean
		i := e.hash & mask
		perturb := e.hash
	probe:
		for {
			if !s.table[i].used {
				break probe
			}
			if i+setLinearProbe <= mask {
				for j := uint64(1); j <= setLinearProbe; j++ {
					if !s.table[i+j].used {
						i += j
						break probe
					}
				}
			}
			perturb >>= setPerturb
			i = (i*5 + 1 + perturb) & mask
		}
		s.table[i] = e
	}
}

// order is the set's iteration order.
func (s *pySet) order() []pair {
	out := make([]pair, 0, s.used)
	for _, e := range s.table {
		if e.used {
			out = append(out, e.key)
		}
	}
	return out
}

// pySetOrder returns the iteration order of set(keys) (keys in insertion order, duplicates allowed).
func pySetOrder(keys []pair) []pair {
	s := newPySet()
	for _, k := range keys {
		s.add(k)
	}
	return s.order()
}
