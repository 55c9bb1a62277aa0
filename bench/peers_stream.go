package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// peerStream is the video stream every side of `bench peers` decodes: framesweep's choice (FFmpeg's
// best video stream, or --stream), as `framesweep probe --json` reports it, with the file's video
// streams (a peer that can only read the first one is refused when the plan's is another).
type peerStream struct {
	Index        int    `json:"stream_index"`
	Selection    string `json:"stream_selection"` // "best" or "requested"
	VideoStreams []int  `json:"video_streams"`
}

func (s peerStream) String() string {
	return fmt.Sprintf("stream %d (%s of video streams %v)", s.Index, s.Selection, s.VideoStreams)
}

// probeStream asks the framesweep binary under test which stream it decodes: the same selection as
// its extract (checked against extract's summary afterwards).
func probeStream(ctx context.Context, cfg PeersConfig, video string) (peerStream, error) {
	args := []string{"probe", "--json"}
	if cfg.Stream != nil {
		args = append(args, "--stream", strconv.Itoa(*cfg.Stream))
	}
	ps, err := runProcess(ctx, cfg.Framesweep, append(args, video)...)
	if err != nil {
		return peerStream{}, err
	}
	var s peerStream
	if err := json.Unmarshal(ps.stdout, &s); err != nil {
		return peerStream{}, fmt.Errorf("probe output is not JSON: %v", err)
	}
	if !slices.Contains(s.VideoStreams, s.Index) {
		return peerStream{}, fmt.Errorf("probe chose stream %d, not among the video streams %v", s.Index, s.VideoStreams)
	}
	return s, nil
}

// refusedStatus is the exit status of a peer that cannot open the plan's stream (common.REFUSED in
// bench/peers/common.py): the bench reports it as refused, not failed, with the peer's one line.
const refusedStatus = 3

// refusal is the peer's one-line reason when err says it refused the stream, else "".
func refusal(err error) string {
	var pe *ProcError
	if errors.As(err, &pe) && pe.Code == refusedStatus {
		return pe.Line
	}
	return ""
}
