package geom

import (
	"math"
	"slices"
	"strings"
)

// InternVL candidate orders (which decide exact aspect ties).
const (
	// OrderReadme: sorted(set(...), key=i*j), a stable sort over CPython set order (OpenGVLab/InternVL
	// README dynamic_preprocess; identical in VLMEvalKit vlmeval/vlm/internvl/utils.py).
	OrderReadme = "readme"
	// OrderLmmsEval: set(sorted_ratios), i.e. plain CPython set order (lmms-eval
	// lmms_eval/models/simple/internvl3.py).
	OrderLmmsEval = "lmms-eval"
)

// InternVL is dynamic_preprocess(image, min_num, max_num, image_size=448, use_thumbnail): pick the grid
// (i cols, j rows) with 1 ≤ min_num ≤ i·j ≤ max_num whose ratio i/j is closest to W/H (exact float64
// compares; on an exact tie a later candidate wins when W·H > 0.5·448²·i·j), resize to (448i, 448j),
// cut row-major 448×448 tiles, and append a 448×448 thumbnail of the source when there is more than one
// tile.
type InternVL struct {
	MinNum    int
	MaxNum    int  // ignored when Auto
	Auto      bool // lmms-eval's per-video rule max(1, min(12, 64 // nFrames))
	Order     string
	Thumbnail bool
	TileSize  int // 448
}

func defaultInternVL() InternVL {
	return InternVL{MinNum: 1, MaxNum: 1, Order: OrderReadme, Thumbnail: true, TileSize: 448}
}

func (g InternVL) String() string {
	d := defaultInternVL()
	var opts []string
	if g.Auto {
		opts = append(opts, "max_num=auto")
	} else if g.MaxNum != d.MaxNum {
		opts = append(opts, "max_num="+itoa(g.MaxNum))
	}
	if g.MinNum != d.MinNum {
		opts = append(opts, "min_num="+itoa(g.MinNum))
	}
	if g.Order != d.Order {
		opts = append(opts, "order="+g.Order)
	}
	if g.Thumbnail != d.Thumbnail {
		opts = append(opts, "thumbnail=false")
	}
	if g.TileSize != d.TileSize {
		opts = append(opts, "tile="+itoa(g.TileSize))
	}
	if len(opts) == 0 {
		return "internvl3"
	}
	return "internvl3:" + strings.Join(opts, ",")
}

// maxNum is the tile limit for a video of nFrames sampled frames.
func (g InternVL) maxNum(nFrames int) int {
	if g.Auto {
		return max(1, min(12, 64/nFrames))
	}
	return g.MaxNum
}

// InternVLCandidates returns the candidate grids (i, j) in the order find_closest_aspect_ratio visits
// them for the given order variant.
func InternVLCandidates(minNum, maxNum int, order string) []pair {
	// set((i, j) for n in range(min_num, max_num+1) for i in range(1, n+1) for j in range(1, n+1)
	//     if min_num <= i*j <= max_num): inserted in generator order, duplicates ignored.
	var gen []pair
	for n := minNum; n <= maxNum; n++ {
		for i := 1; i <= n; i++ {
			for j := 1; j <= n; j++ {
				if p := i * j; p >= minNum && p <= maxNum {
					gen = append(gen, pair{i, j})
				}
			}
		}
	}
	sorted := pySetOrder(gen)
	slices.SortStableFunc(sorted, func(x, y pair) int { return x.a*x.b - y.a*y.b })
	if order == OrderLmmsEval {
		return pySetOrder(sorted)
	}
	return sorted
}

// closestGrid is find_closest_aspect_ratio.
func closestGrid(cands []pair, w, h, tile int) pair {
	aspect := float64(w) / float64(h)
	area := float64(w * h)
	bestDiff := math.Inf(1)
	best := pair{1, 1}
	for _, r := range cands {
		diff := aspect - float64(r.a)/float64(r.b)
		if diff < 0 {
			diff = -diff
		}
		if diff < bestDiff {
			bestDiff, best = diff, r
		} else if diff == bestDiff && area > 0.5*float64(tile)*float64(tile)*float64(r.a)*float64(r.b) {
			best = r
		}
	}
	return best
}

func (g InternVL) Layout(srcW, srcH, nFrames int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	if (g.Order != OrderReadme && g.Order != OrderLmmsEval) || g.TileSize < 1 || g.MinNum < 1 || (!g.Auto && g.MaxNum < 1) || g.MaxNum > 64 {
		return Layout{}, errf("layout", g.String(), ErrBadSpec, "order %q, tile %d, num %d..%d", g.Order, g.TileSize, g.MinNum, g.MaxNum)
	}
	if g.Auto && (nFrames < 1 || nFrames > MaxFrames) {
		return Layout{}, errf("layout", g.String(), ErrFrames, "%d frames (max_num=auto needs the frame count)", nFrames)
	}
	mx := g.maxNum(nFrames)
	if g.MinNum > mx {
		// range(min_num, max_num+1) is empty: no candidates, best stays (1, 1).
		return g.grid(srcW, srcH, pair{1, 1})
	}
	return g.grid(srcW, srcH, closestGrid(InternVLCandidates(g.MinNum, mx, g.Order), srcW, srcH, g.TileSize))
}

func (g InternVL) grid(srcW, srcH int, r pair) (Layout, error) {
	t := g.TileSize
	out := Size{t * r.a, t * r.b}
	if err := checkOut(g, out); err != nil {
		return Layout{}, err
	}
	l := Layout{Src: Size{srcW, srcH}, Resize: out, TokenFrames: 1}
	blocks := r.a * r.b
	l.Tiles = make([]Rect, blocks)
	for k := range blocks {
		l.Tiles[k] = Rect{X: k % r.a * t, Y: k / r.a * t, W: t, H: t}
	}
	if g.Thumbnail && blocks != 1 {
		l.Thumb = &Size{t, t}
	}
	if t%28 == 0 { // (t/14 patches, pixel shuffle 0.5)² per tile: 256 at 448
		l.Tokens = l.Images() * (t / 28) * (t / 28)
	}
	return l, nil
}
