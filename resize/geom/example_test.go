package geom_test

import (
	"fmt"

	"github.com/framesweep/framesweep/resize/geom"
)

func ExampleParse() {
	g, err := geom.Parse("qwen2.5-vl")
	if err != nil {
		panic(err)
	}
	for _, n := range []int{64, 768} {
		l, _ := g.Layout(1920, 1080, n)
		fmt.Printf("%d frames: %v, %d tokens\n", n, l.Resize, l.TokensFor(n))
	}
	// Output:
	// 64 frames: 1008x560, 23040 tokens
	// 768 frames: 644x336, 105984 tokens
}

func ExampleForPreset() {
	g, _ := geom.ForPreset("lmms-eval/internvl3")
	l, _ := g.Layout(1920, 1080, 8) // lmms-eval: max_num = 64 // 8 = 8, CPython set order
	fmt.Println(l.Resize, len(l.Tiles), "tiles +", *l.Thumb, "thumbnail,", l.Tokens, "tokens")
	// Output: 896x448 2 tiles + 448x448 thumbnail, 768 tokens
}

func ExampleSolveIsoAll() {
	allocs, _ := geom.SolveIsoAll(9.7e6, []int{32, 64, 128}, 1920, 1080, 28, 0.10)
	for _, a := range allocs {
		fmt.Printf("%d frames: %dx%d (%+.2f%%)\n", a.Frames, a.W, a.H, 100*a.RelErr)
	}
	// Output:
	// 32 frames: 728x420 (+0.87%)
	// 64 frames: 532x280 (-1.72%)
	// 128 frames: 364x196 (-5.86%)
}
