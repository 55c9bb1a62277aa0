package sampler

import (
	"fmt"
	"sort"
)

// Info describes one sampler for listings and documentation.
type Info struct {
	Name     string `json:"name"`
	Preset   bool   `json:"preset"`
	Frames   bool   `json:"frames_mode"`
	FPS      bool   `json:"fps_mode"`
	Summary  string `json:"summary"`
	Upstream string `json:"upstream,omitempty"`
}

// registry is built once from the explicit lists (no init-time registration by other files).
var registry = func() map[string]*sampler {
	m := map[string]*sampler{}
	for _, s := range append(presetList(), policyList()...) {
		if _, dup := m[s.name]; dup {
			panic("sampler: duplicate name " + s.name) // programmer error in the lists above
		}
		m[s.name] = s
	}
	return m
}()

// Lookup returns the preset or policy with this name, or an error wrapping ErrUnknown.
func Lookup(name string) (Sampler, error) {
	if s, ok := registry[name]; ok {
		return s, nil
	}
	return nil, errf(ErrUnknown, name, fmt.Sprintf("unknown preset or policy %q (known: %v)", name, Names()))
}

// LookupPreset is Lookup restricted to presets.
func LookupPreset(name string) (Sampler, error) {
	if s, ok := registry[name]; ok && s.preset {
		return s, nil
	}
	return nil, errf(ErrUnknown, name, fmt.Sprintf("unknown preset %q (known: %v)", name, names(true)))
}

// LookupPolicy is Lookup restricted to policies.
func LookupPolicy(name string) (Sampler, error) {
	if s, ok := registry[name]; ok && !s.preset {
		return s, nil
	}
	return nil, errf(ErrUnknown, name, fmt.Sprintf("unknown policy %q (known: %v)", name, names(false)))
}

// Names lists every preset and policy name, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func names(preset bool) []string {
	var out []string
	for _, n := range Names() {
		if registry[n].preset == preset {
			out = append(out, n)
		}
	}
	return out
}

// Catalog describes every sampler: presets first, then policies, each group sorted by name.
func Catalog() []Info {
	var out []Info
	for _, p := range []bool{true, false} {
		for _, n := range names(p) {
			s := registry[n]
			out = append(out, Info{Name: s.name, Preset: s.preset, Frames: s.frames, FPS: s.fps, Summary: s.summary, Upstream: s.upstream})
		}
	}
	return out
}
