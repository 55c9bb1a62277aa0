package loader

// Upstream sources, as read (commits of the copies in ../shared/oracles where they exist).
const (
	srcLmms        = "EvolvingLMMs-Lab/lmms-eval@75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3 lmms_eval/models/model_utils/load_video.py"
	srcQwen        = "QwenLM/Qwen3-VL@96588727e44c78b25ba03ea03b8e12f7e64fd0da qwen-vl-utils/src/qwen_vl_utils/vision_process.py"
	srcTorchvision = "pytorch/vision v0.14 torchvision/io/video.py (read_video, _read_from_stream) and transforms/functional_tensor.py (resize), as Debian 12's python3-torchvision 0.14.1"
	srcPyAV        = "PyAV 10 (Debian 12's python3-av): VideoFrame.to_ndarray / reformat, CodecContext defaults (thread_type SLICE, thread_count 0)"
	srcDecord      = "dmlc/decord src/video/video_reader.cc (SetVideoStream, GetFrameCount, IndexKeyframes), src/video/ffmpeg/threaded_decoder.cc, filter_graph.cc"
	srcTorchcodec  = "meta-pytorch/torchcodec src/torchcodec/_core/Metadata.cpp (num_frames, average_fps in exact seek mode), CpuDeviceInterface.cpp"
	srcVLMEvalKit  = "open-compass/VLMEvalKit@e8e78f0 vlmeval/dataset/video_base.py (save_video_frames, frame_paths), videomme.py, mlvu.py"
)

const verifiedBy = "../shared/oracles run with Debian 12's python3-av 10.0, python3-torch 1.13.1, python3-torchvision 0.14.1 (loader/load tests)"

var specs = []Spec{
	{
		Name: Framesweep, Harness: "framesweep", Reader: "decode (exact frame access)",
		Upstream: []string{"docs/decode.md (DESIGN.md \"Frame semantics\")"},
		Stream:   StreamBest, Autorotate: true, Colour: ColourStream, Count: CountIndex,
		Rate: "the stream's average frame rate", Threads: "frame+slice",
		Budget:   "indices are the caller's (a preset or policy plans them)",
		Verified: true, VerifiedBy: "the ffmpeg CLI, byte for byte (decode tests)",
	},
	{
		Name: LmmsEval, Harness: "lmms-eval", Reader: "read_video, PyAV backend (the default)",
		Upstream: []string{srcLmms + " (read_video, load_video_stream, record_video_length_stream, record_video_length_packet)", srcPyAV},
		Stream:   StreamFirst, Autorotate: false, Colour: ColourSwsDefault, Count: CountHeader,
		Rate: "stream.average_rate (the header's avg_frame_rate, a Fraction)", Threads: "frame+slice (thread_type AUTO)",
		Budget:   "Frames = num_frm (default 32, the model adapters' max_num_frames); SampleFPS = fps (caps num_frm at int(frames/rate·fps))",
		Verified: true, VerifiedBy: verifiedBy,
		Quirks: []string{
			"indices np.linspace(0, frames-1, min(frames, num_frm), dtype=int) over the header's frame count; frames are kept while decoding in order, so duplicates collapse and indices past the decoded end are simply missing",
			"a path containing \"webm\" or \"mkv\" (anywhere, directories included) returns every decoded frame, whatever the budget",
			"no header frame count (0), nothing sampled (fps cap 0), or no average rate with an fps: the sampling path raises and read_video returns every frame from a second pass",
			"a decoder error raises; the every-frame fallback then meets it again and read_video raises",
			"frames of different sizes: numpy cannot stack them and read_video raises",
		},
	},
	{
		Name: LmmsEvalTorchcodec, Harness: "lmms-eval", Reader: "read_video, torchcodec backend (LMMS_VIDEO_DECODE_BACKEND=torchcodec)",
		Upstream: []string{srcLmms + " (read_video_torchcodec, _compute_sample_count, _compute_uniform_indices)", srcTorchcodec},
		Stream:   StreamBest, Autorotate: false, Colour: ColourFilterBilinear, Count: CountIndex,
		Rate: "metadata.average_fps: frames / (end − begin) from the content", Threads: "FFmpeg's default",
		Budget: "Frames = num_frm; SampleFPS = fps",
		Quirks: []string{
			"sampled = max(1, min(frames, num_frm, int(frames/fps_video·fps))); indices np.unique(np.linspace(..., dtype=int)) with the same force-last rule",
			"torchcodec converts with swscale (frame's colourspace) when widths are multiples of 32, else a filter graph; emulated with the filter graph (unverified: torchcodec does not install here)",
		},
	},
	{
		Name: QwenVLUtils, Harness: "qwen-vl-utils", Reader: "fetch_video with the torchvision reader (FORCE_QWENVL_VIDEO_READER=torchvision, or neither torchcodec nor decord installed)",
		Upstream: []string{srcQwen + " (fetch_video, _read_video_torchvision, smart_nframes, smart_resize)", srcTorchvision, srcPyAV},
		Stream:   StreamFirst, Autorotate: false, Colour: ColourSwsDefault, Count: CountDecoded,
		Rate: "info[\"video_fps\"] = float(stream.average_rate)", Threads: "slice (PyAV's default)",
		Resize:   "smart_resize(factor = 2·image_patch_size) with fetch_video's per-frame cap, then torchvision resize BICUBIC antialias=True on the uint8 tensor (resize kernel torch-bicubic)",
		Budget:   "Frames = nframes (rounded half-to-even to a multiple of 2); SampleFPS = fps (default 2, min_frames 4, max_frames min(768, frames)); both unset = fps mode at 2",
		Verified: true, VerifiedBy: verifiedBy,
		Quirks: []string{
			"read_video seeks to 0 and decodes every frame, keyed by pts: a later frame with the same pts replaces an earlier one, frames with pts < 0 are dropped, the rest are sorted by pts",
			"a decoder error ends reading silently (torchvision catches av.AVError): the frames before it are the video",
			"a frame without pts makes read_video raise (None does not compare with int)",
			"nframes outside [2, frames] raises ValueError (no clamp); fetch_video retries with torchvision, which raises again",
		},
	},
	{
		Name: QwenVLUtilsDecord, Harness: "qwen-vl-utils", Reader: "fetch_video with the decord reader (the default when decord is installed and torchcodec is not)",
		Upstream: []string{srcQwen + " (_read_video_decord, calculate_video_frame_range)", srcDecord},
		Stream:   StreamBest, Autorotate: true, Colour: ColourFilterBilinear, Count: CountDecord,
		Rate: "vr.get_avg_fps() = the header's avg_frame_rate", Threads: "decord's (FFmpeg auto)",
		Resize: "as qwen-vl-utils",
		Budget: "as qwen-vl-utils",
		Quirks: []string{
			"len(vr) is decord's packet index (one entry per packet of the stream), which counts hidden VP9 frames and discarded edit-list packets that decode to nothing",
			"decord rotates 90/180/270° from the display matrix (transpose filters), ignoring reflection",
			"written from upstream source; decord does not install on Debian 12 (unverified here)",
		},
	},
	{
		Name: QwenVLUtilsTorchcode, Harness: "qwen-vl-utils", Reader: "fetch_video with the torchcodec reader (the default when torchcodec is installed, 0.0.11+)",
		Upstream: []string{srcQwen + " (_read_video_torchcodec)", srcTorchcodec},
		Stream:   StreamBest, Autorotate: false, Colour: ColourFilterBilinear, Count: CountIndex,
		Rate: "metadata.average_fps: frames / (end − begin) from the content (exact seek mode)", Threads: "TORCHCODEC_NUM_THREADS (8)",
		Resize: "as qwen-vl-utils",
		Budget: "as qwen-vl-utils",
		Quirks: []string{"written from upstream source; torchcodec does not install on Debian 12 (unverified here)"},
	},
	{
		Name: VLMEvalKit, Harness: "VLMEvalKit", Reader: "save_video_frames: decord frames written as JPEG (PIL, quality 75) and read back by the model",
		Upstream: []string{srcVLMEvalKit, srcDecord},
		Stream:   StreamBest, Autorotate: true, Colour: ColourFilterBilinear, Count: CountDecord,
		Rate: "vid.get_avg_fps() = the header's avg_frame_rate", Threads: "decord's (FFmpeg auto)",
		JPEGQuality: 75,
		Budget:      "Frames = nframe (default 8: int(i·N/(n+1)), i = 1..n); SampleFPS = fps (int(i·fps_video/fps), i < int(N/fps_video·fps))",
		Quirks: []string{
			"the frames a non-video LLM receives are the JPEG files (quality 75, 4:2:0), not the decoded pixels",
			"a cached frame file is reused if it merely exists (a crash mid-save leaves a truncated JPEG that is reused)",
			"written from upstream source; decord does not install on Debian 12 (the decode and the JPEG step are unverified against it here; the JPEG step equals Pillow's, resize/jpeg_test.go)",
		},
	},
}
