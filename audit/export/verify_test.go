package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/record"
)

// copyDir copies the files of src into a new directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// editManifest rewrites dir's export.json through edit.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// restamp makes the manifest's size and sha256 of name match the file (a tamperer who updates the
// digests but not the row count or the sources).
func restamp(t *testing.T, dir, name string) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	editManifest(t, dir, func(m map[string]any) {
		for _, f := range m["files"].([]any) {
			if f := f.(map[string]any); f["name"] == name {
				f["bytes"], f["sha256"] = len(b), hex.EncodeToString(sum[:])
			}
		}
	})
}

// TestVerifyRefusesTampering: an export whose files are not what export.json records is refused by
// LoadManifest (which every audit of an export goes through) with one line naming the file: a flipped
// verdict, a deleted row (also with the digests updated to match), rows the sources do not cover, a
// records file the manifest does not list, a listed name that is no file of an export, a file
// replaced by a link, and recorded options out of range (10^9 resamples once grew memory by the
// gigabyte). The untouched export verifies.
func TestVerifyRefusesTampering(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "release")
	exportOf(t, fixture(t), dir, audit.ModelsOptions{Options: audit.DefaultOptions()})
	if _, ok, err := LoadManifest(dir); !ok || err != nil {
		t.Fatalf("the export as written: %v %v", ok, err)
	}
	recs := func(d string) string { return filepath.Join(d, RecordsJSONL) }
	b, err := os.ReadFile(recs(dir))
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(b, []byte("\n"))
	edit := func(d string, f func([]byte) []byte) {
		b, err := os.ReadFile(recs(d))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recs(d), f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(b []byte) []byte { return bytes.Replace(b, []byte(`"correct":true`), []byte(`"correct":false`), 1) }
	dropRow := func(b []byte) []byte {
		i := bytes.IndexByte(b, '\n')
		return b[i+1:]
	}
	for _, c := range []struct {
		name   string
		tamper func(d string)
		want   string
	}{
		{"a flipped verdict", func(d string) { edit(d, flip) }, RecordsJSONL + ": "},
		{"a flipped verdict, same size", func(d string) {
			edit(d, func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"prediction":"A"`), []byte(`"prediction":"B"`), 1)
			})
		}, RecordsJSONL + ": sha256 "},
		{"a deleted row", func(d string) { edit(d, dropRow) }, RecordsJSONL + ": "},
		{"a deleted row, digests updated", func(d string) { edit(d, dropRow); restamp(t, d, RecordsJSONL) }, fmt.Sprintf("%s: %d rows, export.json records %d", RecordsJSONL, n-1, n)},
		{"a deleted row, digests and rows updated", func(d string) {
			edit(d, dropRow)
			restamp(t, d, RecordsJSONL)
			editManifest(t, d, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["name"] == RecordsJSONL {
						f["rows"] = n - 1
					}
				}
			})
		}, fmt.Sprintf("its sources cover %d rows, records.jsonl holds %d", n, n-1)},
		{"a records file beside", func(d string) {
			os.WriteFile(filepath.Join(d, "records-extra.jsonl"), []byte(`{"item_id":"q00","config":"f0","correct":true}`+"\n"), 0o644)
		}, "records-extra.jsonl: not in export.json"},
		{"a name outside the export", func(d string) {
			editManifest(t, d, func(m map[string]any) {
				m["files"] = append(m["files"].([]any), map[string]any{"name": "../../etc/passwd", "bytes": 1, "sha256": "x"})
			})
		}, `lists "../../etc/passwd"`},
		{"records.jsonl a link", func(d string) {
			os.Rename(recs(d), recs(d)+".orig")
			os.Symlink(recs(d)+".orig", recs(d))
		}, "records.jsonl: not a regular file"},
		{"records.jsonl missing", func(d string) { os.Remove(recs(d)) }, "records.jsonl: listed in export.json"},
		{"10^9 resamples", func(d string) {
			editManifest(t, d, func(m map[string]any) { m["audit_options"].(map[string]any)["resamples"] = 1000000000 })
		}, "audit_options.resamples 1000000000: out of range (want 0..100000)"},
		{"10^9 folds", func(d string) {
			editManifest(t, d, func(m map[string]any) { m["audit_options"].(map[string]any)["folds"] = 1000000000 })
		}, "audit_options.folds 1000000000: out of range"},
	} {
		d := copyDir(t, dir)
		c.tamper(d)
		_, _, err := LoadManifest(d)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), d) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want an error naming %s with %q", c.name, err, d, c.want)
		}
	}
}

// TestConcurrentExportsOneWins: of exports racing into one new directory exactly one succeeds and the
// other fails saying why; the directory holds the winner's export, which verifies (twice both once
// exited 0 and the directory held one of them).
func TestConcurrentExportsOneWins(t *testing.T) {
	paths := fixture(t)
	rows, srcs, err := Read(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]record.Record, len(rows))
	for i := range rows {
		recs[i] = rows[i].Record
	}
	opt := audit.ModelsOptions{Options: audit.DefaultOptions()}
	opt.Resamples = 0
	sets, err := audit.AllTrajectories(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; try < 6; try++ {
		dir := filepath.Join(t.TempDir(), "new", "release")
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, errs[i] = Write(dir, Input{Rows: rows, Sources: srcs, Sets: sets, Audit: []byte(fmt.Sprintf(`{"writer":%d}`, i)), Options: RecordOptions(opt)})
			}(i)
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !strings.Contains(err.Error(), "another export claimed this directory first") && !strings.Contains(err.Error(), "not empty"):
				t.Errorf("try %d: a loser's error does not say why: %v", try, err)
			}
		}
		if won != 1 {
			t.Fatalf("try %d: %d exports succeeded (%v)", try, won, errs)
		}
		if _, ok, err := LoadManifest(dir); !ok || err != nil {
			t.Fatalf("try %d: the winner's export: %v %v", try, ok, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != len(fileNames)+1-2*b2i(!parquetAvailable) {
			t.Errorf("try %d: %d entries in the export", try, len(ents))
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDatasheetEscapesForeignFields: model names, config ids and source paths holding markup, a link,
// a code span or a line break reach the export's README.md as inert text (they once went raw into
// code spans, where no escape works).
func TestDatasheetEscapesForeignFields(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "<img src=x onerror=alert(1)>`x`")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := 0; i < 8; i++ {
		for fi, f := range []int{8, 16} {
			ok := (i+fi)%3 != 0
			r := record.Full{Record: record.Record{ItemID: fmt.Sprint("q", i), Config: []string{"[a](javascript:alert(1))", "<b>16</b>"}[fi], Status: record.StatusOK,
				Correct: &ok, Model: "<script>alert(1)</script> `m` \n| x", ConfigMeta: &record.ConfigMeta{Frames: &f}}}
			if err := enc.Encode(&r); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := filepath.Join(dir, "a|b.jsonl")
	if err := os.WriteFile(src, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	opt := audit.ModelsOptions{Options: audit.DefaultOptions()}
	opt.Resamples = 0
	exportOf(t, []string{src}, out, opt)
	md, err := os.ReadFile(filepath.Join(out, Datasheet))
	if err != nil {
		t.Fatal(err)
	}
	inCode := false
	for i, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode {
			continue
		}
		unesc := strings.NewReplacer(`\\`, "", `\<`, "", `\]`, "", `\|`, "", "\\`", "").Replace(line)
		if strings.Contains(unesc, "<") || strings.Contains(unesc, "](") || strings.HasPrefix(line, "| x") {
			t.Errorf("README.md:%d: markup from a field: %q", i+1, line)
		}
	}
	if !strings.Contains(string(md), "Model \\<script\\>alert(1)\\</script\\> \\`m\\`  \\| x: 2 multiple-choice configs") {
		t.Errorf("the model line:\n%s", md)
	}
}
