package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestPairLoad: a pair is under load when the load average went above the core count and other
// processes used at least othersBusy cores meanwhile; the bench's own threads lifting the load
// average on an otherwise idle machine is not a loaded pair.
func TestPairLoad(t *testing.T) {
	t.Parallel()
	s0 := machineSample{load1: 1.5, busy: 100, self: 1, ok: true}
	s1 := machineSample{load1: 2.4, busy: 110.5, self: 1.5, ok: true}
	l := measureLoad(s0, s1, procStats{wall: 5, cpu: 9.8})
	if !l.known || l.before != 1.5 || l.after != 2.4 || l.others < 0.19 || l.others > 0.21 { // 10.5 − 9.8 − 0.5
		t.Fatalf("measureLoad: %+v", l)
	}
	quiet := pairOf(l, l, 2)
	if quiet.loaded || quiet.peak != 2.4 || quiet.others < 0.039 || quiet.others > 0.041 {
		t.Errorf("the bench alone at load 2.4 on 2 cores: %+v, want not loaded", quiet)
	}
	busy := runLoad{before: 6, after: 7, others: 4, wall: 5, known: true}
	if p := pairOf(l, busy, 2); !p.loaded || p.before != 1.5 || p.after != 7 || p.peak != 7 || p.others < 0.41 || p.others > 0.43 {
		t.Errorf("others took 4.2 CPU-s of 10 s at load 7: %+v, want loaded", p)
	}
	if p := pairOf(busy, busy, 16); p.loaded {
		t.Errorf("load 7 on 16 cores: %+v, want not loaded", p)
	}
	// Without /proc/stat only the load average decides.
	blind := runLoad{before: 3, after: 3, wall: 1}
	if p := pairOf(blind, blind, 2); !p.loaded || p.others != -1 {
		t.Errorf("load 3 on 2 cores, others unknown: %+v, want loaded", p)
	}
	if s := sampleMachine(); s.ok && (s.busy <= 0 || s.load1 < 0) {
		t.Errorf("sampleMachine: %+v", s)
	}
}

// loadRun is a measured run for peerRows, with the load around its one repetition.
func loadRun(name string, wall float64, l runLoad) *peerRun {
	return &peerRun{name: name, stream: 3, wall: []float64{wall}, cpu: []float64{wall}, rss: []float64{100}, loads: []runLoad{l}}
}

// TestPeerRowsMarkLoad: the stream and the load reach every row, a loaded pair is marked in its row and
// the summary, a refused peer is a skipped row (not a failure), and all of it shows in every format.
func TestPeerRowsMarkLoad(t *testing.T) {
	t.Parallel()
	quiet := runLoad{before: 0.3, after: 1.9, others: 0.05, wall: 2, known: true}
	loaded := runLoad{before: 5.2, after: 6.1, others: 3, wall: 2, known: true}
	fs := loadRun(PeerFramesweep, 2, quiet)
	runs := []*peerRun{fs, loadRun(PeerPyAVOnce, 4, quiet), loadRun(PeerPyAVSeek, 8, loaded),
		{name: PeerOpenCV, refused: "cv2 reads only the first video stream (0), not stream 3"}}
	stream := peerStream{Index: 3, Selection: "best", VideoStreams: []int{0, 3}}
	rows, fails := peerRows(PeersConfig{Reps: 1}, Env{}, "Peers/video=v.mp4", runs, nil, stream, nil, 0.3, 6.1)
	if len(fails) != 0 || len(rows) != 5 {
		t.Fatalf("rows %d, fails %v", len(rows), fails)
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Name[strings.LastIndex(r.Name, "/")+1:]] = r
	}
	if r := byName["peer="+PeerOpenCV]; r.Failure != "" || !strings.Contains(r.Skipped, "cannot open stream 3") {
		t.Errorf("refused peer: %+v", r)
	}
	for _, p := range []string{PeerFramesweep, PeerPyAVOnce, PeerPyAVSeek} {
		r := byName["peer="+p]
		if v, ok := r.Metric("stream"); !ok || v != 3 {
			t.Errorf("%s: stream %v", p, v)
		}
		want := 0.0
		if p == PeerPyAVSeek {
			want = 1
		}
		if v, ok := r.Metric("pairs-under-load"); !ok || v != want || strings.Contains(r.Note, "UNDER LOAD") != (want == 1) {
			t.Errorf("%s: pairs-under-load %v, note %q", p, v, r.Note)
		}
	}
	sum := byName["summary"]
	if v, _ := sum.Metric("pairs-under-load"); v != 1 {
		t.Errorf("summary pairs-under-load %v", v)
	}
	if v, _ := sum.Metric("pairs"); v != 2 {
		t.Errorf("summary pairs %v", v)
	}
	if !strings.HasPrefix(sum.Note, "UNDER LOAD: 1 of 2 pairs") || !strings.Contains(sum.Note, "stream 3 (best of video streams [0 3])") ||
		!strings.Contains(sum.Note, "opencv-seek refused") {
		t.Errorf("summary note %q", sum.Note)
	}
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Write(&b, f, rows); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"pairs-under-load", "UNDER LOAD", "cannot open stream 3", "load1-before", "others-cores"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", f, want, out)
			}
		}
	}
}

// TestRefusal: a peer exiting with refusedStatus is a refusal carrying its last stderr line; any other
// failure is not.
func TestRefusal(t *testing.T) {
	_, err := runProcess(context.Background(), "/bin/sh", "-c", "echo 'v.mp4: cannot open stream 3' >&2; exit 3")
	if got := refusal(err); got != "v.mp4: cannot open stream 3" {
		t.Errorf("exit 3: refusal %q (err %v)", got, err)
	}
	_, err = runProcess(context.Background(), "/bin/sh", "-c", "echo broken >&2; exit 1")
	if got := refusal(err); got != "" || err == nil {
		t.Errorf("exit 1: refusal %q (err %v)", got, err)
	}
}
