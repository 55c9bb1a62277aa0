package record_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestRecordCoreLayers holds the layers of the record core to their imports (go list -deps, the
// default build): the record schema and its verdict rules and synthetic records, the RUN store and
// merge, the items, the importers (ingest), the audit with its dataset, cascade, reports and export
// reach no engine package (pipeline, decode, resize, native) and no cgo binding (go-astiav, gocv,
// llama.cpp, ONNX Runtime), so they build with CGO_ENABLED=0 (scripts/check-cgo.sh builds them so);
// the producers (sweep, ingest) import no package of the audit's analysis (the sweep scores with
// record/score, below both); and record's own tests import no audit package either.
func TestRecordCoreLayers(t *testing.T) {
	gotool := testenv.Need(t, "go")
	const mod = "github.com/framesweep/framesweep/"
	deps := func(pkgs ...string) map[string]bool {
		t.Helper()
		args := []string{"list", "-deps"}
		if pkgs[0] == "-test" {
			args, pkgs = append(args, "-test"), pkgs[1:]
		}
		for _, p := range pkgs {
			args = append(args, mod+p)
		}
		out, err := exec.Command(gotool, args...).Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		m := map[string]bool{}
		for _, l := range strings.Fields(string(out)) {
			m[l] = true
		}
		return m
	}
	core := deps("record", "record/score", "record/synth", "runs", "items", "ingest", "ingest/pyval", "audit/dataset", "audit/cascade",
		"audit", "audit/report", "audit/export")
	if len(core) < 50 || !core[mod+"runs"] || !core["gocloud.dev/blob"] {
		t.Fatalf("go list -deps gave %d packages: not the dependency list this test reads", len(core))
	}
	for p := range core {
		for _, bad := range []string{mod + "pipeline", mod + "decode", mod + "resize", mod + "native", mod + "llm", mod + "sweep",
			"github.com/asticode/go-astiav", "gocv.io/x/gocv", "github.com/ollama/ollama", "github.com/yalue/onnxruntime_go"} {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("the record core imports %s", p)
			}
		}
	}
	sw := deps("sweep")
	if !sw[mod+"pipeline"] || !sw[mod+"record/score"] || !sw[mod+"runs"] {
		t.Fatalf("sweep's dependencies lack the engine, record/score or runs: not the list this test reads")
	}
	// The importers produce records beside items: they import nothing of the analysis.
	for p := range deps("ingest") {
		if p == mod+"audit" || strings.HasPrefix(p, mod+"audit/") {
			t.Errorf("ingest imports %s: the importers must not import the audit's analysis", p)
		}
	}
	// record's own tests read records from record/synth, not from the analysis above it.
	rt := deps("-test", "record")
	if !rt[mod+"record/synth"] {
		t.Fatalf("record's test dependencies lack record/synth: not the list this test reads")
	}
	for p := range rt {
		if p == mod+"audit" || strings.HasPrefix(p, mod+"audit/") {
			t.Errorf("record's tests import %s", p)
		}
	}
	for p := range sw {
		if p == mod+"audit" || strings.HasPrefix(p, mod+"audit/") {
			t.Errorf("sweep imports %s: the producer must not import the audit's analysis", p)
		}
	}
}
