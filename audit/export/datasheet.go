package export

import (
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/audit/report"
)

// column is one documented column: its name, type and meaning.
type column struct{ name, typ, doc string }

// recordColumns document records.jsonl (keys of record.Full) and records.parquet (the same, flat:
// config_meta's fields are columns of their own; see the notes).
var recordColumns = []column{
	{"model", "string", "the model that answered (a sweep: the runtime's model id; an import: --model)"},
	{"item_id", "string", "the item (question); the same id and task across configs and models pairs the answers (the same id in two tasks is two items)"},
	{"config", "string", "the configuration id (a budget, policy, resolution, pipeline; `text-only` feeds no frames)"},
	{"run", "int", "rerun number (absent/0: the primary run; reruns feed the noise floor only)"},
	{"status", "string", "`ok`, or `error` when the pair got no answer (then `error` says why; no verdict)"},
	{"correct", "bool", "multiple choice: the answer's verdict"},
	{"score", "float 0–1", "open-ended: Token-F1 of the response against the reference(s)"},
	{"prediction", "string", "the extracted option letter (multiple choice) or the response (open-ended)"},
	{"unparsed", "bool", "multiple choice: the response named no option letter (correct is false; the audit counts these apart)"},
	{"answer", "string", "the gold letter or reference text"},
	{"confidence", "float 0–1", "the largest option probability"},
	{"latency_s", "float", "the runtime's own seconds for this answer"},
	{"error", "string", "why an error record got no answer"},
	{"over_context", "bool", "the runtime refused the prompt as longer than its context: the config is beyond the model's ceiling"},
	{"category, duration, task, question_id", "string", "the item's category, duration group, task (split) and benchmark question id"},
	{"config_meta", "object", "frames (0: text only), text_only, width, height (nominal, for the pixel cost), policy, preset, seed, pipeline (raw|cached), max_pixels (an imported config's per-frame pixel budget), indices (the frame indices fed for this record's video). Parquet: columns frames, text_only, config_width, config_height, policy, preset, seed, pipeline, max_pixels, indices"},
	{"video, video_sha256", "string", "the input video and the sha256 of its bytes"},
	{"stream_index, timestamps_s", "int, [float]", "the stream decoded; the presentation time of each frame fed"},
	{"geometry, kernel, width, height, images_per_frame, frames_fed", "string, int", "how the frames were resized and what each image fed measured"},
	{"input_key, input_sha256", "string", "the input object's cache key; the sha256 of the exact tensor the runtime received"},
	{"runtime", "string", "the runtime spec (engine:key=value,…)"},
	{"model_sha256", "object", "sha256 of every file the spec names, by spec key (Parquet: JSON text)"},
	{"weights_sha256", "string", "one digest of the weights: the one file's sha256, or sha256 of the lines \"KEY SHA256\\n\" of model_sha256 sorted by key"},
	{"context_tokens", "int", "the runtime's context size in tokens"},
	{"template, prompt_sha256, response", "string", "the prompt template, the digest of the rendered prompt, the model's text"},
	{"probs", "object", "every option letter's probability (Parquet: JSON text)"},
	{"prompt_tokens, completion_tokens", "int", "token counts"},
	{"request_sha256, image_format", "string", "servers: the exact request body's digest; how frames were encoded"},
	{"visual_tokens", "object", "the visual tokens the model counted against those the frames fed make: expected, seen (null: unknown, why says why), how seen was found (runtime, text-only difference, tokenize, two visual configs, unknown), family, overhead (Parquet: JSON text)"},
	{"at", "string", "when the record was written (UTC, RFC 3339)"},
	{"source", "int", "Parquet only: index into export.json `sources` (JSON Lines: the sources' `rows` ranges)"},
}

var trajectoryColumns = []column{
	{"model, item_id, task, category, duration", "string", "the model and item"},
	{"trajectory", "string", "one character per config of export.json `models[].mc_configs` (the entry of the row's model and, when the records are of several tasks, its task: each task has its own grid): `1` correct, `0` wrong, `.` no answer"},
	{"scores", "[float or null]", "one score per config of `models[].oe_configs` (Parquet: NaN for none)"},
	{"paired", "bool", "the item has a verdict in every multiple-choice config of the model's grid: one of the audit's items; the tags below are null otherwise"},
	{"confused", "bool", "correct under some config and wrong under a strictly costlier one (text-only counts as cheapest): visual_confusion_rate counts these; null for every item when some config's cost is unknown (no order), as confused_visual_only and terminal_regression"},
	{"confused_visual_only", "bool", "the same among visual configs only"},
	{"text_correct", "bool", "correct under a text-only config"},
	{"text_overwrite", "bool", "text-correct and wrong under some visual config"},
	{"text_overwrite_all_visual", "bool", "text-correct and wrong under every visual config"},
	{"terminal_regression", "bool", "wrong at the costliest config and right at a cheaper one"},
	{"unstable", "bool", "correctness not constant across the configs"},
	{"oracle_correct", "bool", "correct under some config (the per-item oracle)"},
	{"rescued, harmed", "[int]", "the transitions (indices into `models[].transitions`: consecutive configs) that turned the item wrong → right, right → wrong"},
	{"oracle_best", "[string]", "the configs where the item does best: the correct ones (multiple choice), the ones of its highest score (open-ended)"},
	{"confused_in_models", "int", "several models: in how many of them the item (task and id) is confused (null for one model, and when confusion is undefined)"},
}

// datasheet renders README.md.
func datasheet(m *Manifest, in Input) []byte {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# framesweep audit export\n\n")
	p("Item-level scaling audit data: every answer of every model to every item under every configuration, each item's trajectory across the configurations with the tags the audit derives, the audit itself, and how each answer was produced. Written by `framesweep audit … --export` (framesweep %s, %s, format `%s`).\n\n", m.Engine, m.Created, m.Format)
	p("## Contents\n\n| file | rows | what |\n|---|---|---|\n")
	what := map[string]string{
		RecordsJSONL:      "one record per item × config × model (× rerun): the answer, its verdict or score, and its provenance",
		RecordsParquet:    "the same rows, flat columns",
		TrajectoriesJSONL: "one row per model × item: the trajectory and the audit's tags",
		TrajParquet:       "the same rows",
		AuditJSON:         "the audit (`framesweep audit --json`) these files give",
		Datasheet:         "this datasheet",
	}
	for _, f := range m.Files {
		p("| `%s` | %d | %s |\n", f.Name, f.Rows, what[f.Name])
	}
	p("| `%s` | | the manifest: the audit's options, every model's configs and transitions, the sources and their run provenance, each file's sha256 |\n\n", ManifestName)
	if !m.Parquet {
		p("**No Parquet files**: this framesweep was built with `-tags noparquet`, so the export is JSON Lines only.\n\n")
	}
	for _, n := range m.Notes {
		p("Note: %s.\n\n", report.MarkdownText(n))
	}
	p("Models: %d. Sources:\n\n", len(m.Models))
	// Paths, runtime specs, run.json's fields, model and config names are not framesweep's words:
	// each is inert text (report.MarkdownText), never inside a code span, where no escape works.
	md := report.MarkdownText
	for _, s := range m.Sources {
		p("- %s: rows %d–%d of records.jsonl", md(s.Path), s.Rows[0], s.Rows[1])
		if s.Run != nil {
			var libs []string
			for _, k := range keysOf(s.Run.Libraries) {
				libs = append(libs, md(k+" "+s.Run.Libraries[k]))
			}
			p("; a sweep (engine %s, runtime %s, grid sha256 %s…, items sha256 %s…; libraries: %s)", md(s.Run.Engine), md(s.Run.Runtime),
				md(prefix(s.Run.GridSHA256, 12)), md(prefix(s.Run.ItemsSHA256, 12)), strings.Join(libs, ", "))
		}
		p("\n")
	}
	for _, g := range m.Models {
		name := md(g.Name)
		if g.Name == "" {
			name = "(unnamed)"
		}
		cfgs := make([]string, len(g.MCConfigs))
		for i, c := range g.MCConfigs {
			cfgs[i] = md(c)
		}
		if g.Task != "" {
			name += " (task " + md(g.Task) + ")"
		}
		p("\nModel %s: %d multiple-choice configs (%s), %d open-ended.\n", name, len(g.MCConfigs), strings.Join(cfgs, ", "), len(g.OEConfigs))
	}
	p("\n## records.jsonl / records.parquet\n\n| column | type | meaning |\n|---|---|---|\n")
	for _, c := range recordColumns {
		p("| `%s` | %s | %s |\n", c.name, c.typ, c.doc)
	}
	p("\nA missing key (JSON) or null (Parquet) is unknown, never zero. `framesweep audit DIR` reads records.jsonl with the options in export.json and gives audit.json again.\n")
	p("\n## trajectories.jsonl / trajectories.parquet\n\nThe items and configs are those the audit counts: with several models, the matched grid (configs every model answered, less those beyond a model's context ceiling) and the items every model answered in it; with several tasks (splits), each task's own grid.\n\n| column | type | meaning |\n|---|---|---|\n")
	for _, c := range trajectoryColumns {
		p("| `%s` | %s | %s |\n", c.name, c.typ, c.doc)
	}
	p("\n## Reading it with Python and NumPy only\n\n```python\nimport json, numpy as np\nrows = [json.loads(l) for l in open(\"records.jsonl\")]\nok = [r for r in rows if r.get(\"status\", \"ok\") == \"ok\" and \"correct\" in r and r.get(\"run\", 0) == 0]\nmodels = sorted({r.get(\"model\", \"\") for r in ok}); configs = sorted({r[\"config\"] for r in ok})\nacc = np.array([[np.mean([r[\"correct\"] for r in ok if r.get(\"model\", \"\") == m and r[\"config\"] == c] or [np.nan]) for c in configs] for m in models])\ntraj = [json.loads(l) for l in open(\"trajectories.jsonl\")]\nconfused = np.array([t[\"confused\"] for t in traj if t[\"paired\"]])\n```\n")
	p("\nDefinitions of every metric: METRICS.md and docs/audit.md of framesweep.\n")
	return []byte(b.String())
}

// prefix is the first n bytes of s (all of it when shorter), cut at a rune boundary.
func prefix(s string, n int) string {
	for i := range s {
		if i >= n {
			return s[:i]
		}
	}
	return s
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
