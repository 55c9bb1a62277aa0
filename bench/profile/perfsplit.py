#!/usr/bin/env python3
"""Where a framesweep process's CPU goes: perf samples with call stacks, split by what they were doing.

    perf record -e cpu-clock -F 499 --call-graph dwarf,16384 -o extract.data -- \\
        framesweep extract --grid bench/peers/grid.yaml --videos CLIP --out DIR --pipeline raw \\
        --kernel pil-bicubic --no-autorotate
    perf script -i extract.data -F tid,ip,sym,dso | python3 bench/profile/perfsplit.py [CPU_SECONDS]

Each sample goes to the first category whose marker appears anywhere in its stack (innermost frame
first), in the order below; with CPU_SECONDS (the process's user + sys time) each share is also given
in seconds. Stacks unwound through libavcodec without symbols still end in the library, so decoding is
recognised by the library too; C frames below a cgo call do not show their Go callers (the unwinder
does not cross the switch to the system stack), so demuxing in the index scan and in the pass fall in
one category.
"""
import collections
import sys

CATEGORIES = [
    ("startup: dynamic linking, static initialisers", ["_dl_start", "dl_main", "_dl_init", "runtime.doInit", "runtime.schedinit"]),
    ("hashing the video (SHA-256, cache key)", ["VideoRef).sha256", "VideoRef.sha256", "cache.FileSHA256"]),
    ("index scan (decode.Open)", ["pipeline.openDecoder", "decode.Open"]),
    ("RGB conversion (scale filter, copy out)", ["buffersink", "buffersrc", "sws_scale", "av_image_copy", "converter).convert", "libswscale", "libavfilter"]),
    ("resize (Pillow-exact bicubic)", ["native_resample", "resize.", "h_avx512", "v_avx512", "h_avx2", "v_avx2"]),
    ("writes (objects: hash, write, fsync; manifest)", ["cache.", "storeWriter", "StoreSink", "Spool", "fsync", "Fsync", "Manifest"]),
    ("decoder open/close", ["avcodec_open2", "avcodec_free_context", "avcodec_flush_buffers", "avcodec_close", "avcodec_alloc_context3"]),
    ("decode (libavcodec)", ["avcodec_send_packet", "avcodec_receive_frame", "libavcodec"]),
    ("demux and seeks (av_read_frame, seek)", ["av_read_frame", "av_seek_frame", "avformat_seek_file", "libavformat"]),
    ("Go runtime (GC, scheduler, sysmon)", ["runtime.gcBgMarkWorker", "runtime.sysmon", "runtime.mcall", "runtime.schedule", "runtime.findRunnable",
                                            "runtime.mallocgc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.morestack", "runtime.gcDrain",
                                            "runtime.park_m", "runtime.goexit0", "runtime.mstart", "runtime.futex", "runtime.usleep"]),
]


def category(stack):
    text = "\n".join(stack)
    for name, markers in CATEGORIES:
        if any(m in text for m in markers):
            return name
    return "other"


def samples(lines):
    """Stacks of `perf script -F tid,ip,sym,dso` output: a header line, indented frames, a blank line."""
    stack = []
    for line in lines:
        if line[:1] in ("\t", " ") and line.strip():
            stack.append(line.strip())
        elif stack:
            yield stack
            stack = []
    if stack:
        yield stack


def main():
    cpu = float(sys.argv[1]) if len(sys.argv) > 1 else None
    counts = collections.Counter(category(s) for s in samples(sys.stdin))
    total = sum(counts.values())
    if total == 0:
        sys.exit("perfsplit: no samples with stacks on stdin")
    for name, n in counts.most_common():
        share = n / total
        sec = " %7.2f s" % (share * cpu) if cpu else ""
        print("%6.2f %%%s  %s" % (100 * share, sec, name))
    print("%d samples" % total)


if __name__ == "__main__":
    main()
