package decode

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

type manifestRow map[string]string

func readManifest(t testing.TB) (string, []manifestRow) {
	dir := testenv.SharedVideos(t)
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	hdr, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	var rows []manifestRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		row := manifestRow{}
		for i, h := range hdr {
			if i < len(rec) {
				row[h] = rec[i]
			}
		}
		rows = append(rows, row)
	}
	if len(rows) < 30 {
		t.Fatalf("MANIFEST.tsv has %d rows, expected the 31 shared videos", len(rows))
	}
	return dir, rows
}

// TestManifestVideos covers every shared video: decodable ones must have ffprobe's frame count and
// per-frame timestamps and decode their first/middle/last frames; broken ones must fail cleanly, with
// typed errors (open failures) or per-frame errors (frames that do not decode).
func TestManifestVideos(t *testing.T) {
	dir, rows := readManifest(t)
	for _, row := range rows {
		rel := row["path"]
		t.Run(rel, func(t *testing.T) {
			path := filepath.Join(dir, rel)
			start := time.Now()
			// The manifest describes (and ffprobe's v:0 counts) its video_stream_index.
			opts := Options{}
			if si, err := strconv.Atoi(row["video_stream_index"]); err == nil {
				opts.Stream = StreamAt(si)
			}
			v, err := Open(path, opts)
			switch {
			case strings.HasPrefix(row["container"], "OPEN FAILED"):
				wantOpenErr(t, err, path, ErrCorrupt)
				return
			case row["n_video_streams"] == "0":
				wantOpenErr(t, err, path, ErrNoVideoStream)
				return
			case strings.HasPrefix(row["codec"], "unknown"):
				wantOpenErr(t, err, path, ErrUnsupportedCodec)
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer v.Close()
			counted, _ := strconv.Atoi(row["nb_frames_counted"]) // "N/A" → 0: nothing decodes
			broken := strings.HasPrefix(row["purpose"], "BROKEN")
			in := v.Info()
			if in.Codec != row["codec"] || in.Width != atoi(row["width_x_height"], 0) || in.Height != atoi(row["width_x_height"], 1) {
				t.Errorf("info %s %dx%d, manifest %s %s", in.Codec, in.Width, in.Height, row["codec"], row["width_x_height"])
			}
			if r := row["rotation_deg_ffprobe"]; r != "" && strconv.Itoa(in.Rotation) != r {
				t.Errorf("rotation %d, manifest %s", in.Rotation, r)
			}
			if !broken {
				checkManifestDecodable(t, v, path, row, counted)
			} else {
				checkManifestBroken(t, v, path, counted)
			}
			if el := time.Since(start); el > 60*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

// checkManifestDecodable: ffprobe's frame count and per-frame timestamps, the header's count, and the
// first, middle and last frames decode.
func checkManifestDecodable(t *testing.T, v *Video, path string, row manifestRow, counted int) {
	t.Helper()
	n := v.NumFrames()
	in := v.Info()
	if n != counted {
		t.Fatalf("NumFrames = %d, ffprobe -count_frames = %d", n, counted)
	}
	if h := row["nb_frames_header"]; h != "" && in.FramesHeader != nil && strconv.FormatInt(*in.FramesHeader, 10) != h {
		t.Errorf("frames_header %d, manifest %s", *in.FramesHeader, h)
	}
	if n <= 400 && !in.TimestampsSynthesized {
		want := ffprobeFramePTS(t, path)
		if len(want) != n {
			t.Fatalf("ffprobe shows %d frames, index has %d", len(want), n)
		}
		for i, p := range want {
			if v.Index().PTS[i] != p {
				t.Fatalf("frame %d: pts %d, ffprobe %d", i, v.Index().PTS[i], p)
			}
		}
	}
	got := 0
	idx := []int{n - 1, 0, n / 2}
	st, err := v.Read(idx, func(f *Frame) error { got++; return nil })
	if err != nil || got != 3 && n >= 3 {
		t.Fatalf("Read(%v): %d frames, %v (stats %+v)", idx, got, err, st)
	}
}

// checkManifestBroken: every indexed frame is requested; the ones that do not decode come back as
// FrameErrors naming their index, the rest are delivered. Nothing is substituted.
func checkManifestBroken(t *testing.T, v *Video, path string, counted int) {
	t.Helper()
	n := v.NumFrames()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var got []int
	_, err := v.Read(all, func(f *Frame) error { got = append(got, f.Index); return nil })
	failed := FailedFrames(err)
	if d := DamagedFrames(err); len(d) > 0 {
		// Concealed frames are refused (the default): ffprobe counts them as decoded.
		t.Logf("damaged frames refused: %v", d)
		got = append(got, d...)
	}
	if err == nil || !errors.Is(err, ErrFrameFailed) {
		t.Fatalf("broken video read without a frame error: %v", err)
	}
	var de *Error
	if !errors.As(err, &de) || de.Path != path {
		t.Fatalf("error does not name the file: %v", err)
	}
	if len(got) != counted || len(got)+len(failed) != n {
		t.Fatalf("delivered %d (ffprobe decodes %d), failed %v, indexed %d", len(got), counted, failed, n)
	}
	t.Logf("failed frames %v: %.200s", failed, err)
}

func atoi(wxh string, part int) int {
	ps := strings.Split(wxh, "x")
	if len(ps) != 2 {
		return 0
	}
	n, _ := strconv.Atoi(ps[part])
	return n
}

func wantOpenErr(t *testing.T, err error, path string, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Open succeeded, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("Open error %v, want %v", err, want)
	}
	var de *Error
	if !errors.As(err, &de) || de.Path != path {
		t.Fatalf("error %v does not name the file", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
}
