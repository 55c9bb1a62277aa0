package grid

import (
	"strconv"
)

// TokensFor is the number of visual tokens a config spends on n frames: model.tokens_per_resolution
// or model.tokens_per_frame times n when given, otherwise the resolution's geometry (resize/geom)
// applied to model.source_size (which accounts for Qwen's two-frame temporal patches). known is false
// when neither is available.
func (g *Grid) TokensFor(c *Config, n int) (tokens int, known bool) {
	m := g.Spec.Model
	if m == nil || c.TextOnly {
		return 0, m != nil
	}
	if t, ok := m.TokensPerResolution[c.Resolution]; ok {
		return t * n, true
	}
	if m.TokensPerFrame > 0 {
		return m.TokensPerFrame * n, true
	}
	if c.geometry != nil && g.srcW > 0 && n > 0 {
		l, err := c.geometry.Layout(g.srcW, g.srcH, n)
		if err == nil && l.Tokens > 0 {
			return l.TokensFor(n), true
		}
	}
	return 0, false
}

// FitsContext reports the total tokens (visual + prompt) of a config sampling n frames and whether
// they fit the model's context; known is false without a model section or a token count.
func (g *Grid) FitsContext(c *Config, n int) (tokens int, fits, known bool) {
	m := g.Spec.Model
	if m == nil {
		return 0, true, false
	}
	v, known := g.TokensFor(c, n)
	if !known {
		return 0, true, false
	}
	tokens = v + m.PromptTokens
	return tokens, tokens <= m.Context, true
}

// applyModel computes visual tokens, the over-context flag (or drops those configs) and iso-compute
// groups. fps-mode configs are checked with options.max_frames when it is set; otherwise their
// frame count is known only per video (use FitsContext with the plan's length).
func (g *Grid) applyModel() error {
	m := g.Spec.Model
	if m == nil {
		return nil
	}
	kept := g.Configs[:0]
	for _, c := range g.Configs {
		n := c.Frames
		if n == 0 && !c.TextOnly {
			n = g.Spec.Options.MaxFrames
		}
		if n > 0 || c.TextOnly {
			tokens, fits, known := g.FitsContext(&c, n)
			if known {
				c.VisualTokens = tokens - m.PromptTokens
				c.OverContext = !fits
			}
		}
		if c.OverContext && m.OverContext == "drop" {
			g.Dropped = append(g.Dropped, c.ID)
			continue
		}
		kept = append(kept, c)
	}
	g.Configs = kept
	if g.Spec.IsoCompute {
		// A group is worth naming only when it trades frames for pixels: equal visual tokens
		// reached with at least two different frame budgets.
		budgets := map[int]map[int]bool{}
		for _, c := range g.Configs {
			if c.Frames > 0 && c.VisualTokens > 0 {
				if budgets[c.VisualTokens] == nil {
					budgets[c.VisualTokens] = map[int]bool{}
				}
				budgets[c.VisualTokens][c.Frames] = true
			}
		}
		for i := range g.Configs {
			c := &g.Configs[i]
			if c.Frames > 0 && c.VisualTokens > 0 && len(budgets[c.VisualTokens]) > 1 {
				c.IsoGroup = "iso-" + strconv.Itoa(c.VisualTokens)
			}
		}
	}
	return nil
}
