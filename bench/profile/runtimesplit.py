#!/usr/bin/env python3
"""Where an in-process model runtime's CPU goes inside a sweep: perf samples split into the runtime's
(llama.cpp, ggml, mtmd) and the rest, and the runtime's by what its innermost frame was doing.

    perf record -e cpu-clock -F 999 --call-graph dwarf,16384 -o sweep.data -- framesweep sweep \\
        --grid examples/sweep-grid.yaml --items examples/items.jsonl \\
        --runtime "llamacpp:model=M/tiny-llama.gguf,mmproj=M/tiny-mmproj.gguf,threads=1" --out RUN --jobs 1
    perf script -i sweep.data -F tid,ip,sym,dso | python3 bench/profile/runtimesplit.py 999

The argument is the sampling frequency: each sample is then 1/F seconds of CPU. A sample is the
runtime's when any frame of its stack is llama.cpp's, ggml's or mtmd's (a statically linked build shows
the same symbols inside the framesweep binary, a prebuilt one in libllama/libggml*); kernel and libc
frames under them (page faults, malloc, memset) count for the runtime too. docs/sweep.md ("Speed") has
the figures this gave.
"""
import collections
import re
import sys

RUNTIME = re.compile(r"ggml|llama|clip|mtmd|tinyBLAS|img_tool|gguf")
INNER = [
    ("matrix multiplication (llamafile sgemm, tinyBLAS)", r"tinyBLAS|sgemm"),
    ("dot products (ggml_vec_dot)", r"ggml_vec_dot"),
    ("softmax", r"soft_max"),
    ("other ggml operators", r"ggml_compute_forward|ggml_vec_|ggml_cpu_fp|ggml_graph_compute|ggml_barrier"),
    ("kernel (page faults, scheduling)", r"\[kernel|kallsyms"),
    ("libc (malloc, memset, memcpy)", r"libc\.so|libstdc"),
    ("image preprocessing (mtmd)", r"img_tool|clip_image_preprocess|resize|normalize"),
    ("ggml graph, allocation, scheduler", r"ggml"),
    ("llama (tokens, KV cache, batch, sampling)", r"llama"),
]


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
    if len(sys.argv) != 2:
        sys.exit("usage: perf script -F tid,ip,sym,dso | runtimesplit.py SAMPLING_HZ")
    hz = float(sys.argv[1])
    side, inner = collections.Counter(), collections.Counter()
    for stack in samples(sys.stdin):
        if not RUNTIME.search("\n".join(stack)):
            side["not the runtime"] += 1
            continue
        side["the runtime"] += 1
        for name, pat in INNER:
            if re.search(pat, stack[0]):
                inner[name] += 1
                break
        else:
            inner["other"] += 1
    if not side:
        sys.exit("runtimesplit: no samples with stacks on stdin")
    for name, n in side.most_common():
        print("%8.0f ms  %s" % (1000 * n / hz, name))
    for name, n in inner.most_common():
        print("%8.0f ms    %s" % (1000 * n / hz, name))


if __name__ == "__main__":
    main()
