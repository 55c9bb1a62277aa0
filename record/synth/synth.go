// Package synth makes deterministic demo records: a toy response model over a 10-config grid, so
// that examples (examples/records/demo.jsonl), docs, tests and benchmarks have records with rescued
// and harmed items, confusion and a working cascade. Its numbers describe no model.
package synth

import (
	"fmt"
	"math"

	"github.com/framesweep/framesweep/internal/splitmix"
	"github.com/framesweep/framesweep/record"
)

// Records returns deterministic demo records: items × the grid {text, 8…128 frames uniform at 448², 128
// frames random and dense-start, 32 frames at 880² (within 5% of 128 at 448²), 32 frames cached}. Answers come from a toy response model
// (a latent per-item difficulty, budget-dependent evidence, and per-config noise) so the audit has rescued
// and harmed items, confusion and a working cascade. It exists for examples/records, docs and benchmarks;
// its numbers describe no real model.
func Records(items int, seed uint64) []record.Record {
	type cfg struct {
		id       string
		frames   int
		size     int
		policy   string
		pipeline string
	}
	grid := []cfg{
		{"text", 0, 0, "", "raw"},
		{"f8", 8, 448, "uniform", "raw"}, {"f16", 16, 448, "uniform", "raw"}, {"f32", 32, 448, "uniform", "raw"},
		{"f64", 64, 448, "uniform", "raw"}, {"f128", 128, 448, "uniform", "raw"},
		{"f128-random", 128, 448, "random", "raw"}, {"f128-dense", 128, 448, "dense-start", "raw"},
		{"f32-880", 32, 880, "uniform", "raw"}, {"f32-cached", 32, 448, "uniform", "cached"},
	}
	cats := []string{"Counting Problem", "Action Recognition", "OCR Problems", "Temporal Reasoning", "Object Reasoning"}
	durs := []string{"short", "medium", "long"}
	g := &splitmix.Source{State: seed}
	u := func() float64 { return float64(g.Uint64()>>11) / (1 << 53) }
	out := make([]record.Record, 0, items*len(grid))
	for i := 0; i < items; i++ {
		id := fmt.Sprintf("demo-%06d", i)
		cat, dur := cats[g.Intn(len(cats))], durs[g.Intn(len(durs))]
		gold := "ABCD"[g.Intn(4)]
		difficulty := u()*2.2 - 0.6
		textPrior := u()
		if cat == "Counting Problem" {
			difficulty += 0.35
		}
		for _, c := range grid {
			var p float64
			switch {
			case c.frames == 0:
				p = 0.45 * textPrior
			default:
				evidence := math.Log2(float64(c.frames)) / 7 // 0.43 at 8 frames … 1 at 128
				if c.size > 448 {
					evidence += 0.05
				}
				p = 1 / (1 + math.Exp(-4*(evidence-difficulty)))
				if dur == "long" {
					p *= 0.9
				}
			}
			ok := u() < p
			pred := string(gold)
			if !ok {
				pred = string("ABCD"[(int(gold-'A')+1+g.Intn(3))%4])
			}
			conf := 0.25 + 0.7*p*(0.6+0.4*u())
			if !ok {
				conf *= 0.8
			}
			conf = math.Round(conf*1000) / 1000
			lat := 0.05 + float64(c.frames)*float64(max(c.size, 1)*max(c.size, 1))/448/448*0.004 + 0.01*u()
			lat = math.Round(lat*1000) / 1000
			meta := &record.ConfigMeta{Frames: &c.frames, Policy: c.policy, Pipeline: c.pipeline}
			if c.frames == 0 {
				t := true
				meta = &record.ConfigMeta{Frames: &c.frames, TextOnly: &t, Pipeline: c.pipeline}
			} else {
				w, h := c.size, c.size
				meta.Width, meta.Height = &w, &h
			}
			out = append(out, record.Record{ItemID: id, Config: c.id, Correct: &ok, Prediction: pred, Answer: string(gold),
				Confidence: &conf, Category: cat, Duration: dur, ConfigMeta: meta, LatencyS: &lat})
		}
	}
	return out
}
