package extract

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/shard"
)

func testVideo(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "testdata", "videos", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func testGrid(t testing.TB, text string) *grid.Grid {
	t.Helper()
	g, err := grid.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestExtractShards: three shards of one extract cover every video exactly once between them (a
// missing file too, by its path), each shard holds exactly the videos shard.Of assigns it by content
// digest, and together they write the objects of one unsharded extract.
func TestExtractShards(t *testing.T) {
	ctx := context.Background()
	g := testGrid(t, "frames: [2]\npolicies: [uniform]\nresolutions: [\"32x32\"]\n")
	videos := []string{testVideo(t, "video_90.mov"), testVideo(t, "h265_video.mp4"), testVideo(t, "bear-vp9-odd-dimensions.webm"),
		testVideo(t, "nasa_13013.mp4"), filepath.Join(t.TempDir(), "missing.mp4")}
	const n = 3
	keys := map[string]int{}
	seen := map[string]int{}
	failed := 0
	for i := range n {
		store, err := cache.Open(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(ctx, Options{Grid: g, Store: store, Jobs: 2, Shard: Shard{I: i, N: n}}, videos)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Shard != (Shard{I: i, N: n}).String() || sum.Videos+sum.VideosOther != len(videos) {
			t.Fatalf("shard %d: %+v", i, sum)
		}
		failed += sum.VideosFailed
		for _, v := range sum.PerVideo {
			seen[v.Path]++
			if got := shard.Of(v.SHA256, n); got != i {
				t.Errorf("%s (sha256 %.12s) extracted by shard %d, belongs to %d", v.Path, v.SHA256, i, got)
			}
		}
		refs, _ := filepath.Glob(filepath.Join(store.Location(), "ac", "*", "*.json"))
		for _, r := range refs {
			keys[filepath.Base(r)]++
		}
	}
	if failed != 1 || len(seen) != len(videos)-1 {
		t.Fatalf("videos extracted %v, %d failed", seen, failed)
	}
	for p, c := range seen {
		if c != 1 {
			t.Errorf("%s extracted by %d shards", p, c)
		}
	}
	whole, err := cache.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, Options{Grid: g, Store: whole, Jobs: 2}, videos); err != nil {
		t.Fatal(err)
	}
	refs, _ := filepath.Glob(filepath.Join(whole.Location(), "ac", "*", "*.json"))
	if len(refs) != len(keys) || len(refs) == 0 {
		t.Fatalf("shards wrote %d keys, one extract %d", len(keys), len(refs))
	}
	for _, r := range refs {
		if keys[filepath.Base(r)] != 1 {
			t.Errorf("key %s written by %d shards", filepath.Base(r), keys[filepath.Base(r)])
		}
	}
}
