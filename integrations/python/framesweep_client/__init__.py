"""framesweep_client: exact frames from `framesweep serve` (standard library + numpy).

Client(url).frames(video, **config) -> (numpy.ndarray, meta) returns the frames tensor that
`framesweep extract` stores for that grid configuration of that video, with its provenance;
Client(url).plan(video, **config) returns its plan. The lmms-eval model adapter
(framesweep_client.lmms_eval_model) and the VLMEvalKit video model class
(framesweep_client.vlmevalkit_model) take their frames from the same server.
reproduce_record(RUN, ITEM, CONFIG) (the CLI), reproduce_records(RUN, records) (many, one CLI process)
and Client(url).record_frames(record) (a server) give a sweep record's input again, checked against
its input_sha256 (framesweep_client.records).
"""

from .client import CONFIG_FIELDS, Client, FramesweepError, load_npy, load_safetensors, sha256_of
from .records import check_record, record_request, reproduce_record, reproduce_records

__version__ = "0.1.0"
__all__ = ["Client", "FramesweepError", "load_safetensors", "load_npy", "sha256_of", "CONFIG_FIELDS",
           "record_request", "reproduce_record", "reproduce_records", "check_record", "__version__"]
