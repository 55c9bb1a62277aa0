package worker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/framesweep/framesweep/decode"
)

// Request is the one JSON object the parent writes to the worker's stdin (followed by EOF); a pooled
// worker (--loop) reads one after another.
type Request struct {
	Op   string `json:"op"` // "probe" | "read" (and the test ops, see EnvTestOps)
	Path string `json:"path,omitempty"`
	// FD, when set, is the descriptor the parent passed (exec.Cmd.ExtraFiles: 3): the worker decodes the
	// file it holds, /proc/self/fd/FD, and Path only names it (in errors and Info.Path). A file opened
	// and checked by the parent is then decoded without its name being resolved again.
	FD int `json:"fd,omitempty"`
	// FDPassed (pooled workers, --loop): the file comes as a descriptor over the unix socket at
	// descriptor 3 (SCM_RIGHTS), sent just before this request; the worker decodes it as FD above and
	// closes it after the job.
	FDPassed bool           `json:"fd_passed,omitempty"`
	Indices  []int          `json:"indices,omitempty"`
	Options  decode.Options `json:"options"`
	Detail   bool           `json:"detail,omitempty"` // "probe": add per-frame pts and keyframe flags
	// Size, when set, makes "read" resize every frame in the worker before sending it: the pipe then
	// carries W×H×3 bytes per frame instead of the source size, and the parent never holds a full frame.
	Size *Size `json:"size,omitempty"`
	// Arg parameterises test ops ("alloc": bytes per step, "exit": the status).
	Arg int64 `json:"arg,omitempty"`

	file *os.File // the parent's side of FD
}

// Size is a resize done in the worker (resize.New(Kernel, srcW, srcH, W, H)).
type Size struct {
	W      int    `json:"w"`
	H      int    `json:"h"`
	Kernel string `json:"kernel,omitempty"` // "" = resize.DefaultKernel
}

// Message types on the worker's stdout. Each message is one JSON line; a "frame" line is followed by
// exactly Bytes raw bytes (H rows of 3·W bytes, RGB24, no padding). A job ends with "done" or "error".
const (
	msgFrame = "frame"
	msgInfo  = "info"
	msgDone  = "done"
	msgError = "error"
)

// header is one message line.
type header struct {
	Type    string          `json:"type"`
	Index   int             `json:"index,omitempty"`
	PTS     int64           `json:"pts,omitempty"`
	Seconds float64         `json:"seconds,omitempty"`
	Key     bool            `json:"key,omitempty"`
	Damaged bool            `json:"damaged,omitempty"` // "frame": the decoder concealed corrupt data in it (OnDamaged keep)
	W       int             `json:"w,omitempty"`
	H       int             `json:"h,omitempty"`
	Bytes   int             `json:"bytes,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`  // "info": the probe result
	Stats   json.RawMessage `json:"stats,omitempty"` // "done": the op's statistics
	Code    string          `json:"code,omitempty"`  // "error": sentinel code (see codes.go)
	Message string          `json:"message,omitempty"`
	Failed  []int           `json:"failed,omitempty"` // "error": frames the decoder did not produce
	// "error": damaged frames refused (OnDamaged fail), and what FFmpeg flagged on the first.
	Refused    []int  `json:"refused,omitempty"`
	RefusedWhy string `json:"refused_why,omitempty"`
}

// Bounds on what the parent accepts, so a confused or hostile worker cannot make it allocate without limit.
const (
	maxHeaderBytes = 64 << 20 // a probe with per-frame detail of a long video is a few MB
	maxFrameBytes  = 3 * 16384 * 16384
	maxRequest     = 64 << 20
)

// writeMsg writes one message line and its payload.
func writeMsg(w io.Writer, h *header, payload []byte) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return err
	}
	if len(payload) > 0 {
		_, err = w.Write(payload)
	}
	return err
}

// msgReader reads messages from the worker's stdout, reusing one payload buffer.
type msgReader struct {
	r   *bufio.Reader
	buf []byte
}

func newMsgReader(r io.Reader) *msgReader { return &msgReader{r: bufio.NewReaderSize(r, 1<<20)} }

// next returns the next message and its payload (valid until the next call). io.EOF means the stream
// ended cleanly between messages.
func (m *msgReader) next() (*header, []byte, error) {
	line, err := m.readLine()
	if err != nil {
		return nil, nil, err
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, nil, fmt.Errorf("bad message line %.80q: %v", line, err)
	}
	if h.Type != msgFrame {
		return &h, nil, nil
	}
	if h.W <= 0 || h.H <= 0 || h.Bytes != 3*h.W*h.H || h.Bytes > maxFrameBytes {
		return nil, nil, fmt.Errorf("bad frame header %dx%d with %d bytes", h.W, h.H, h.Bytes)
	}
	if cap(m.buf) < h.Bytes {
		m.buf = make([]byte, h.Bytes)
	}
	m.buf = m.buf[:h.Bytes]
	if _, err := io.ReadFull(m.r, m.buf); err != nil {
		return nil, nil, fmt.Errorf("frame %d payload: %w", h.Index, unexpected(err))
	}
	return &h, m.buf, nil
}

func (m *msgReader) readLine() ([]byte, error) {
	var acc []byte
	for {
		chunk, err := m.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			acc = append(acc, chunk...)
			if len(acc) > maxHeaderBytes {
				return nil, fmt.Errorf("message line longer than %d bytes", maxHeaderBytes)
			}
			continue
		}
		if err != nil {
			if err == io.EOF && len(acc)+len(chunk) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("truncated message line: %w", unexpected(err))
		}
		if acc != nil {
			chunk = append(acc, chunk...)
		}
		return bytes.TrimSuffix(chunk, []byte("\n")), nil
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
