package serve

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestRequestKeysExact: a request body naming a key twice, or a key in another case, is refused with
// a 400 naming the key, as the record and items validators refuse such text (encoding/json once took
// "frames":8,"frames":16 as 16 and "Frames" or "FRAMES" as frames); an escape that spells a key again
// counts as the same key. Each key spelt once and exactly is decoded.
func TestRequestKeysExact(t *testing.T) {
	ok := `"video":"nasa_13013.mp4","policy":"uniform"`
	for body, want := range map[string]string{
		`{` + ok + `,"frames":8,"frames":16}`:           `key "frames" twice`,
		`{` + ok + `,"frames":8,"\u0066rames":16}`:      `key "frames" twice`,
		`{` + ok + `,"Frames":8}`:                       `unknown field "Frames"`,
		`{` + ok + `,"FRAMES":8}`:                       `unknown field "FRAMES"`,
		`{"Video":"nasa_13013.mp4","policy":"uniform"}`: `unknown field "Video"`,
		`{` + ok + `,"frames":8,"Frames":16}`:           `unknown field "Frames"`,
		`{` + ok + `,"frames":4,"\udc80":1}`:            "lone surrogate",
	} {
		_, err := DecodeRequest([]byte(body))
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a 400 with %q", body, err, want)
		}
	}
	r, err := DecodeRequest([]byte(`{` + ok + `,"frames":8,"sample_fps":0}`))
	if err != nil || r.Frames != 8 || r.Policy != "uniform" {
		t.Fatalf("a plain request: %+v %v", r, err)
	}
	// Through the server: the same 400, and the server goes on.
	_, url := start(t, Config{Roots: []string{testVideos(t)}})
	for _, path := range []string{"/v1/plan", "/v1/frames"} {
		res := post(t, url, path, `{`+ok+`,"frames":8,"frames":16}`)
		if res.status != http.StatusBadRequest || !strings.Contains(res.errBody(t).Error, "twice") {
			t.Errorf("%s duplicate frames: %d %s", path, res.status, res.body)
		}
	}
}
