package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/bench"
)

const benchTestVideo = "../../../shared/testdata/videos/androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench", "nope"},
		{"bench", "grid", "--format", "xml"},
		{"bench", "grid", "--gops", "x"},
		{"bench", "grid", "--ladder", "zigzag"},
		{"bench", "grid", "--reps", "0"},
		{"bench", "decode", "--threads", "a"},
		{"bench", "memory", "--size", "448"},
		{"bench", "decode", "--threads", "2k"},
		{"bench", "memory", "--size", "448x448junk"},
		{"bench", "memory", "--kernel", "nope"},
		{"bench", "grid", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(args, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, errb.String())
		}
		if n := strings.Count(strings.TrimSpace(errb.String()), "\n"); n != 0 && !strings.Contains(errb.String(), "usage:") {
			t.Errorf("%v: stderr is not one line: %q", args, errb.String())
		}
	}
}

// TestBenchDecodeAndMemory runs two modes on a small real video and checks their JSON rows.
func TestBenchDecodeAndMemory(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"bench", "decode", "--video", benchTestVideo, "--threads", "1", "--json", "--quiet"}, &out, &errb); code != exitOK {
		t.Fatalf("bench decode: exit %d: %s", code, errb.String())
	}
	var rows []bench.Row
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("bench decode: %d rows, %v: %s", len(rows), err, out.String())
	}
	if v, ok := rows[1].Metric("served-frames"); !ok || v != 120 {
		t.Errorf("decode served %v frames, want 120", v)
	}
	if rows[0].Env.Commit == "" || rows[0].Env.CPUs < 1 {
		t.Errorf("row without environment: %+v", rows[0].Env)
	}

	out.Reset()
	errb.Reset()
	if code := dispatch([]string{"bench", "memory", "--video", benchTestVideo, "--frames", "8", "--size", "32x24", "--format", "csv"}, &out, &errb); code != exitOK {
		t.Fatalf("bench memory: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), ",output-MiB,") || !strings.Contains(out.String(), "frames=8/size=32x24") {
		t.Errorf("bench memory csv: %s", out.String())
	}

	out.Reset()
	errb.Reset()
	if code := dispatch([]string{"bench", "decode", "--video", "/no/such/video.mp4", "--quiet"}, &out, &errb); code != exitError {
		t.Fatalf("missing video: exit %d, want %d", code, exitError)
	}
	if !strings.Contains(errb.String(), "/no/such/video.mp4") || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Errorf("error line %q", errb.String())
	}
}
