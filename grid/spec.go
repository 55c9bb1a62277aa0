package grid

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/framesweep/framesweep/sampler"
	"go.yaml.in/yaml/v3"
)

// Limits that keep a hostile or mistaken grid file bounded in time and memory.
const (
	maxGridBytes   = 1 << 20
	maxGridConfigs = 100000
)

// Spec is the YAML grid file, field for field (docs/sampler.md describes each field).
type Spec struct {
	Name        string    `yaml:"name"`
	Frames      []int     `yaml:"frames"`
	SampleFPS   []float64 `yaml:"sample_fps"`
	Policies    []string  `yaml:"policies"`
	Presets     []string  `yaml:"presets"`
	Seeds       []uint64  `yaml:"seeds"`
	Resolutions []string  `yaml:"resolutions"`
	Pipelines   []string  `yaml:"pipelines"`
	TextOnly    bool      `yaml:"text_only"`
	Options     Options   `yaml:"options"`
	Model       *Model    `yaml:"model"`
	IsoCompute  bool      `yaml:"iso_compute"`
	// Stream is the video stream extract and sweep decode (its index in the file, as --stream takes
	// it); absent: FFmpeg's best video stream. A --stream flag overrides it.
	Stream *int `yaml:"stream"`
	// Loader is the harness loader whose reader picks and decodes every config's frames
	// (docs/loaders.md): absent or "framesweep" = framesweep's own exact reading of the policies and
	// presets. A harness loader replaces policies and presets (loaders.go).
	Loader string `yaml:"loader"`
}

// Options are applied to every config's Request.
type Options struct {
	Torch       sampler.Torch `yaml:"torch"`
	ForceLast   bool          `yaml:"force_last"`
	ForceSample bool          `yaml:"force_sample"`
	MinFrames   int           `yaml:"min_frames"`
	MaxFrames   int           `yaml:"max_frames"`
	// qwen-vl-utils loaders only: fetch_video's element keys.
	LoaderOptions `yaml:",inline"`
}

// Model is the context ceiling of a matched grid: a config fits when
// tokens_per_frame × frames + prompt_tokens ≤ context.
type Model struct {
	Name                string         `yaml:"name"`
	Context             int            `yaml:"context"`
	PromptTokens        int            `yaml:"prompt_tokens"`
	TokensPerFrame      int            `yaml:"tokens_per_frame"`
	TokensPerResolution map[string]int `yaml:"tokens_per_resolution"`
	SourceSize          string         `yaml:"source_size"`  // WxH: derive tokens from each resolution's geometry
	OverContext         string         `yaml:"over_context"` // "flag" (default) or "drop"
}

// Pipelines of DESIGN.md: raw decoded frames, or a JPEG q75 round trip as VLMEvalKit does.
const (
	PipelineRaw    = "raw"
	PipelineCached = "cached"
)

// Load reads and parses a grid file; errors name the file.
func Load(path string) (*Grid, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &sampler.Error{Path: path, Op: "grid", Detail: err.Error(), Err: ErrGrid}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGridBytes+1))
	if err != nil {
		return nil, &sampler.Error{Path: path, Op: "grid", Detail: err.Error(), Err: ErrGrid}
	}
	g, err := Parse(data)
	return g, sampler.WithPath(err, path)
}

func gridErr(format string, a ...any) error {
	return errf(ErrGrid, "grid", fmt.Sprintf(format, a...))
}

// Parse parses a YAML grid (unknown fields are errors) and expands it into configs.
func Parse(data []byte) (*Grid, error) {
	if len(data) > maxGridBytes {
		return nil, gridErr("file larger than %d bytes", maxGridBytes)
	}
	// First as nodes, which keep line numbers: yaml.v3 would store `frames: [8.5]` as 8 without a word,
	// so every integer field is checked to hold an integer before the typed decode.
	var doc yaml.Node
	ndec := yaml.NewDecoder(bytes.NewReader(data))
	if err := ndec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, gridErr("empty grid file")
		}
		return nil, gridErr("malformed YAML: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if top := doc.Content; len(doc.Content) == 1 && top[0].Kind != yaml.MappingNode && !emptyYAML(&doc) {
		// yaml.v3 would say "cannot unmarshal !!str into grid.Spec".
		return nil, &sampler.Error{Line: top[0].Line, Op: "grid", Detail: fmt.Sprintf("a grid is a YAML mapping of fields (frames:, policies:, …), this is a %s", kindName(top[0].Kind)), Err: ErrGrid}
	}
	if err := checkIntegers(&doc, reflect.TypeFor[Spec](), "", 0); err != nil {
		return nil, err
	}
	var spec Spec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		return nil, gridErr("malformed YAML: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	// A second document would otherwise be ignored without a word (an empty trailing "---" is fine).
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || !emptyYAML(&more) {
			return nil, gridErr("a grid file holds one YAML document; found more after the first \"---\"")
		}
	}
	return Expand(spec)
}

// intLiteral is a plain decimal integer (that YAML resolves to a float only when it overflows int64).
var intLiteral = regexp.MustCompile(`^[-+]?[0-9]+$`)

// checkIntegers walks a YAML node against the Go type it will decode into and rejects, with the line
// and the key, a value that is not an integer where the field is one (frames, seeds, min_frames,
// max_frames, the model's token counts). Keys the type does not have are left to the typed decode
// (KnownFields), which names them; depth bounds alias chains.
func checkIntegers(n *yaml.Node, t reflect.Type, key string, depth int) error {
	if n == nil || depth > 64 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkIntegers(c, t, key, depth+1); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		return checkIntegers(n.Alias, t, key, depth+1)
	}
	at := func(format string, a ...any) error {
		return &sampler.Error{Line: n.Line, Op: "grid", Detail: key + ": " + fmt.Sprintf(format, a...), Err: ErrGrid}
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode {
			return at("want an integer, got a %s", kindName(n.Kind))
		}
		switch tag := n.ShortTag(); {
		case tag == "!!null":
		case tag == "!!int" && t.Kind() >= reflect.Uint && strings.HasPrefix(n.Value, "-"):
			return at("%s is negative", n.Value)
		case tag == "!!int":
		case tag == "!!float" && intLiteral.MatchString(n.Value):
			return at("%s is out of range", n.Value)
		default:
			return at("%q is not an integer", n.Value)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil // the typed decode reports the shape
		}
		for i, c := range n.Content {
			if err := checkIntegers(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := fmt.Sprintf("%s[%q]", key, n.Content[i].Value)
			if err := checkIntegers(n.Content[i+1], t.Elem(), k, depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			name := n.Content[i].Value
			f, ok := yamlField(t, name)
			if !ok {
				continue
			}
			k := name
			if key != "" {
				k = key + "." + name
			}
			if err := checkIntegers(n.Content[i+1], f.Type, k, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlField finds the struct field whose yaml tag is name.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" && opts == "inline" && f.Type.Kind() == reflect.Struct { // an inlined struct's keys are its fields'
			if g, ok := yamlField(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if tag == name && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.ScalarNode:
		return "single value"
	}
	return "value"
}

// emptyYAML reports whether a decoded document has no content (only comments, or null).
func emptyYAML(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return n.Kind == 0 || n.Kind == yaml.DocumentNode && len(n.Content) == 0 ||
		n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
