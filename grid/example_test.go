package grid_test

import (
	"fmt"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/sampler"
)

func ExampleParse() {
	g, _ := grid.Parse([]byte(`
frames: [4, 8]
policies: [nested]
presets: [lmms-eval]
resolutions: ["448x448"]
text_only: true
`))
	v := sampler.Video{Frames: 100, FPS: 25}
	var plans []sampler.Selection
	for i := range g.Configs {
		p, _ := g.Configs[i].Select(v)
		fmt.Println(g.Configs[i].ID, p.Indices)
		plans = append(plans, p)
	}
	u := sampler.Union(plans...)
	fmt.Println("union", u.Size, "shared", u.Shared)
	// Output:
	// f4-nested-448x448-raw [0 25 50 75]
	// f8-nested-448x448-raw [0 12 25 37 50 62 75 87]
	// f4-lmms-eval-448x448-raw [0 33 66 99]
	// f8-lmms-eval-448x448-raw [0 14 28 42 56 70 84 99]
	// text-only []
	// union 17 shared 5
}
