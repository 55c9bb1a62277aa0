package decode

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// packetsFFprobe lists the video packets of a file in file order: pts, byte position and size.
func packetsFFprobe(t *testing.T, path string) (pts, pos, size []int64) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,pos,size",
		"-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe -show_packets %s: %v", path, err)
	}
	for _, l := range strings.Fields(string(out)) {
		f := strings.Split(l, ",") // ffprobe's order: pts, size, pos
		if len(f) != 3 {
			t.Fatalf("ffprobe packet line %q", l)
		}
		p, _ := strconv.ParseInt(f[0], 10, 64)
		s, _ := strconv.ParseInt(f[1], 10, 64)
		o, _ := strconv.ParseInt(f[2], 10, 64)
		pts, size, pos = append(pts, p), append(size, s), append(pos, o)
	}
	return pts, pos, size
}

// cliConceals reports whether the ffmpeg CLI (one decoder thread, so nothing is lost) reports error
// concealment or a decoding error for a file: the oracle that a flipped byte was noticed by FFmpeg.
func cliConceals(t *testing.T, path string) bool {
	t.Helper()
	out, _ := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-v", "info", "-threads", "1", "-i", path, "-f", "null", "-").CombinedOutput()
	s := string(out)
	return strings.Contains(s, "concealing ") || strings.Contains(s, "error while decoding MB")
}

// damagedClip flips one byte in the middle of one P/B packet of a clean H.264 MP4, trying packets
// until the CLI reports that FFmpeg concealed something, and returns the damaged file and the frame
// index of that packet (its pts' rank: frame i is the i-th picture in presentation order).
func damagedClip(t *testing.T, dir string) (clean, damaged string, frame int) {
	t.Helper()
	clean = clip(t, dir, "clean.mp4", "320x240")
	pts, pos, size := packetsFFprobe(t, clean)
	src, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(pts)
	slices.Sort(sorted)
	for _, k := range []int{8, 3, 17, 30, 13, 40} {
		b := bytes.Clone(src)
		b[pos[k]+size[k]/2] ^= 0xff
		p := filepath.Join(dir, fmt.Sprintf("damaged_pkt%d.mp4", k))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if cliConceals(t, p) {
			return clean, p, slices.Index(sorted, pts[k])
		}
	}
	t.Fatal("no flipped byte made FFmpeg conceal anything")
	return
}

// TestDamagedFrames: one flipped byte in an H.264 stream makes FFmpeg conceal part of one picture.
// That frame is reported as damaged by index — with one decoder thread (exact frame flags) and with
// frame threads (which lose the flags in FFmpeg 5.1: the decoder's error report triggers a
// single-threaded re-decode) — refused by default with a *DamagedError, delivered flagged with
// OnDamaged keep. The frames before it are byte-identical to the clean file's.
func TestDamagedFrames(t *testing.T) {
	tmp := t.TempDir()
	clean, damaged, want := damagedClip(t, tmp)
	cv, err := Open(clean, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref := readAllRGB(t, cv)
	cv.Close()
	n := len(ref)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for _, threads := range []int{1, 0, 4} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			checkDamagedKeep(t, damaged, threads, ref, want)
			checkDamagedFail(t, damaged, threads, n, want)
		})
	}
	// The clean file: nothing damaged, nothing re-decoded.
	v, err := Open(clean, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	st, err := v.Read(all, func(*Frame) error { return nil })
	if err != nil || len(st.Damaged) != 0 || st.SingleThreadRedecodes != 0 {
		t.Fatalf("clean file: %v, stats %+v", err, st)
	}
	if _, err := Open(clean, Options{OnDamaged: "sometimes"}); !errors.Is(err, ErrBadOption) {
		t.Fatalf("OnDamaged sometimes: %v", err)
	}
}

// checkDamagedKeep: with OnDamaged keep every frame is delivered, the damaged one (want) flagged and
// listed; the frames before it equal the clean file's (ref).
func checkDamagedKeep(t *testing.T, damaged string, threads int, ref [][]byte, want int) {
	t.Helper()
	n := len(ref)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	// keep: every frame delivered, the damaged one flagged and listed.
	v, err := Open(damaged, Options{Threads: threads, OnDamaged: DamagedKeep})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var flagged []int
	got := 0
	st, err := v.Read(all, func(f *Frame) error {
		got++
		if f.Damaged {
			flagged = append(flagged, f.Index)
		}
		if f.Index < want && !bytes.Equal(f.Packed(), ref[f.Index]) {
			t.Errorf("frame %d (before the damage) differs from the clean file", f.Index)
		}
		if f.Index == want && bytes.Equal(f.Packed(), ref[f.Index]) {
			t.Errorf("frame %d is flagged damaged but equals the clean frame", f.Index)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("keep: %v", err)
	}
	if got != n || !slices.Equal(flagged, []int{want}) || !slices.Equal(st.Damaged, []int{want}) || st.OnDamaged != "keep" {
		t.Fatalf("keep: %d of %d delivered, flagged %v, stats damaged %v (%s); want frame %d", got, n, flagged, st.Damaged, st.OnDamaged, want)
	}
	t.Logf("frame %d damaged; single-thread re-decodes %d", want, st.SingleThreadRedecodes)
}

// checkDamagedFail: with OnDamaged fail (the default) the damaged frame is refused with a one-line
// *DamagedError naming the file, the others are delivered.
func checkDamagedFail(t *testing.T, damaged string, threads, n, want int) {
	t.Helper()
	// fail (the default): the damaged frame is refused, the others delivered.
	f, err := Open(damaged, Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var delivered []int
	st, err := f.Read([]int{0, want, n - 1}, func(fr *Frame) error {
		if fr.Damaged {
			t.Errorf("frame %d delivered damaged under fail", fr.Index)
		}
		delivered = append(delivered, fr.Index)
		return nil
	})
	var dmg *DamagedError
	var de *Error
	if !errors.Is(err, ErrDamaged) || !errors.Is(err, ErrFrameFailed) || !errors.As(err, &dmg) || !errors.As(err, &de) || de.Path != damaged {
		t.Fatalf("fail: error %v, want a *DamagedError naming the file", err)
	}
	if !slices.Equal(dmg.Frames, []int{want}) || !slices.Equal(DamagedFrames(err), []int{want}) || len(FailedFrames(err)) != 0 ||
		!strings.Contains(err.Error(), fmt.Sprintf("refused: %d ", want)) ||
		// What FFmpeg flagged: concealment when the pictures before it were decoded, failed slices alone
		// when the non-reference ones were left out (nonref.go).
		!strings.Contains(err.Error(), "concealment active") && !strings.Contains(err.Error(), "slices failed") {
		t.Fatalf("fail: %v (frames %v)", err, dmg.Frames)
	}
	if !slices.Equal(delivered, []int{0, n - 1}) || !slices.Equal(st.Damaged, []int{want}) || st.OnDamaged != "fail" || st.Failed != 0 {
		t.Fatalf("fail: delivered %v, stats %+v", delivered, st)
	}
	oneLine(t, err)
}
