package extract

import (
	"fmt"
	"sort"

	"github.com/framesweep/framesweep/pipeline"
)

// Inputs is the --out of a batch of inputs (`frames --record RUN --records FILE`): input i (from 1) is
// written as WriteInput writes one, into the subdirectory InputDir(i), through DIR opened as an
// os.Root like every output of frames (no name resolved through a link to outside it, each file
// written whole). OpenInputs refuses, before anything is written, a DIR that holds anything but those
// subdirectories unless Force (then kept, and listed: Others); each subdirectory is claimed as
// WriteInput claims its directory when its input is written.
type Inputs struct {
	d     *outDir
	force bool
	n     int
}

// InputDir is the subdirectory of input i of a batch: 000001, 000002, …
func InputDir(i int) string { return fmt.Sprintf("%06d", i) }

// OpenInputs makes and claims out.Dir for n inputs; Close releases it.
func OpenInputs(out Out, n int) (*Inputs, error) {
	d, err := openOut(out.Dir)
	if err != nil {
		return nil, err
	}
	b := &Inputs{d: d, force: out.Force, n: n}
	if err := b.claim(); err != nil {
		d.Close()
		return nil, err
	}
	return b, nil
}

// claim checks DIR's entries: directories named InputDir(1…n) are the batch's (their files are checked
// when written); anything else, or a link or file under such a name, is refused unless force.
func (b *Inputs) claim() error {
	f, err := b.d.root.Open(".")
	if err != nil {
		return fmt.Errorf("%s: %w", b.d.path, err)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", b.d.path, err)
	}
	want := map[string]bool{}
	for i := 1; i <= b.n; i++ {
		want[InputDir(i)] = true
	}
	var others []string
	for _, e := range ents {
		switch {
		case want[e.Name()] && e.IsDir():
		case want[e.Name()] && !b.force:
			return fmt.Errorf("%s%s under the name of an input's directory: outputs are never written through one; remove it, or --force to replace it",
				b.d.where(e.Name()), describeEntry(b.d, e.Name()))
		case !want[e.Name()]:
			others = append(others, e.Name())
		}
	}
	sort.Strings(others)
	if len(others) > 0 && !b.force {
		return fmt.Errorf("%s holds %d entr%s this run does not write (%s%s): another input's outputs would sit beside this one's; give an empty --out, or --force to write beside them",
			b.d.path, len(others), plural(len(others), "y", "ies"), b.d.where(others[0]), describeEntry(b.d, others[0]))
	}
	b.d.others = others
	return nil
}

// Others are the entries of DIR the batch does not write, kept under Force (nil when none).
func (b *Inputs) Others() []string { return b.d.otherPaths() }

// Write writes input i (1…n) into its subdirectory and returns the subdirectory's path and the files.
func (b *Inputs) Write(i int, o *pipeline.Object) (string, *InputFiles, error) {
	if i < 1 || i > b.n {
		return "", nil, fmt.Errorf("input %d of a batch of %d", i, b.n)
	}
	name := InputDir(i)
	where := b.d.where(name)
	l, err := layoutInput(o)
	if err != nil {
		return where, nil, err
	}
	if st, err := b.d.root.Lstat(name); err == nil && !st.IsDir() && b.force {
		if err := b.d.root.Remove(name); err != nil { // a link is replaced, never followed
			return where, nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	if err := b.d.mkdir(name); err != nil {
		return where, nil, err
	}
	r, err := b.d.root.OpenRoot(name)
	if err != nil {
		return where, nil, fmt.Errorf("%s: %w", where, err)
	}
	sub := &outDir{path: where, root: r}
	defer sub.Close()
	files, err := writeInput(sub, b.force, o, l)
	return where, files, err
}

// Close releases DIR; idempotent.
func (b *Inputs) Close() error { return b.d.Close() }
