"""Stand-in for a VLMEvalKit video dataset (see ../README.md): the attributes infer_data reads and
the message VideoMME.build_prompt builds for a video LLM (vlmeval/dataset/videomme.py: the video path,
then the question), written from upstream."""


class VideoDataset:
    def __init__(self, dataset_name, videos, nframe=0, fps=-1):
        if nframe > 0 and fps > 0:
            raise ValueError("fps and nframe should not be set at the same time")  # video_base.py
        self.dataset_name, self.videos, self.nframe, self.fps = dataset_name, list(videos), nframe, fps

    def __len__(self):
        return len(self.videos)

    def build_prompt(self, idx, video_llm):
        if not video_llm:
            raise NotImplementedError("stand-in: only the video-LLM message")
        return [dict(type="video", value=self.videos[idx]), dict(type="text", value="Question: which? Answer: ")]
