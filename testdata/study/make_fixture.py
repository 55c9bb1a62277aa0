"""Writes a fixture in the released per-item format of the study this project implements
(ECOSYSTEM.md "A study's released per-item format"), from data of our own making: no item, answer or
prediction of the real release is in it.

usage: make_fixture.py OUTDIR

OUTDIR/labels/per_item.csv
    sample_id, model, split, config, frame_count, pixel_count, predicted_option,
    ground_truth_option, correct, source_tag, protocol_note
    Four splits (V1_short, V1_medium, V2_medium, MLVU) that share item ids (001-1 is in several), four
    models, the configs textonly, 16f_151k, 32f_151k, 64f_76k, 128f_input224. Some models lack a config
    on one split (llava-ov-7b has no 128f_input224 on V1_medium and V2_medium: its context cap;
    videollama3-7b no 64f_76k on MLVU), and internvl3-8b has no 32f_151k answer for two items of
    V1_short (those items are dropped from its paired grid there). A few predictions are empty
    (no letter: unparsed, wrong).
OUTDIR/labels/aggregated/{model}_{split}_predictions_wide.csv
    sample_id, then one column of predicted letters per config the model has on the split (no gold
    letters); a reply with no letter is "?", a missing answer an empty cell (import with --empty
    missing to leave it out, as per_item.csv does).
OUTDIR/items_answers.jsonl
    one line per (split, item): {"item_id", "task", "answer"} (and "category" on Video-MME items), the
    answers-only items file `import table --items` reads for the wide tables.

Deterministic: a fixed SplitMix64 stream, no dependence on Python's random module or hash seed.
Python 3 standard library only."""

import csv
import json
import os
import sys

SPLITS = ["V1_short", "V1_medium", "V2_medium", "MLVU"]
MODELS = ["qwen2.5-vl-7b", "internvl3-8b", "llava-ov-7b", "videollama3-7b"]
# config → (frame_count, pixel_count): the per-frame max pixels (151200 = 2 × 75600), or S×S for a
# fixed input; 0 and 0 for text only.
CONFIGS = [
    ("textonly", 0, 0),
    ("16f_151k", 16, 151200),
    ("32f_151k", 32, 151200),
    ("64f_76k", 64, 75600),
    ("128f_input224", 128, 224 * 224),
]
# Each split's item ids: Video-MME style NNN-K (three questions per video), overlapping ranges so
# that the splits share ids.
VIDEOS = {"V1_short": range(1, 11), "V1_medium": range(4, 14), "V2_medium": range(1, 11), "MLVU": range(8, 18)}
MISSING_CONFIG = {("llava-ov-7b", "V1_medium"): "128f_input224", ("llava-ov-7b", "V2_medium"): "128f_input224",
                  ("videollama3-7b", "MLVU"): "64f_76k"}
MISSING_ROWS = {("internvl3-8b", "V1_short", "003-2", "32f_151k"), ("internvl3-8b", "V1_short", "007-1", "32f_151k")}
CATEGORIES = ["Counting Problem", "Action Reasoning", "OCR Problems", "Temporal Perception"]


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) / float(1 << 53)

    def below(self, n):
        return self.next() % n


def items(split):
    return ["%03d-%d" % (v, q) for v in VIDEOS[split] for q in (1, 2, 3)]


def letters(split):
    return "ABCDEFGH" if split == "V2_medium" else "ABCD"


def main(out):
    rng = SplitMix64(20260101)
    gold = {}
    for split in SPLITS:
        for it in items(split):
            gold[(split, it)] = letters(split)[rng.below(len(letters(split)))]
    rows, wide = [], {}
    for mi, model in enumerate(MODELS):
        for split in SPLITS:
            configs = [c for c in CONFIGS if MISSING_CONFIG.get((model, split)) != c[0]]
            table = wide.setdefault((model, split), {"configs": [c[0] for c in configs], "rows": []})
            for it in items(split):
                g = gold[(split, it)]
                hard = rng.uniform()  # the item's difficulty for this model
                cells = []
                for k, (config, frames, pixels) in enumerate(configs):
                    if (model, split, it, config) in MISSING_ROWS:
                        cells.append("")
                        continue
                    p = 0.5 + 0.1 * mi / len(MODELS) + 0.06 * k - 0.45 * hard
                    correct = rng.uniform() < p
                    if correct:
                        pred = g
                    elif rng.below(12) == 0:
                        pred = ""  # no letter in the reply
                    else:
                        others = [x for x in letters(split) if x != g]
                        pred = others[rng.below(len(others))]
                    note = ""
                    if config == "128f_input224":
                        note = "fallback input size 224x224"
                    if model == "llava-ov-7b" and frames > 32:
                        note = "LLaVA context cap: frames subsampled to 32"
                    tag = "release_v1" if split.startswith("V1") else "release_v2"
                    rows.append([it, model, split, config, frames, pixels, pred, g, int(correct), tag, note])
                    cells.append(pred or "?")
                table["rows"].append([it] + cells)
    os.makedirs(os.path.join(out, "labels", "aggregated"), exist_ok=True)
    with open(os.path.join(out, "labels", "per_item.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["sample_id", "model", "split", "config", "frame_count", "pixel_count", "predicted_option",
                    "ground_truth_option", "correct", "source_tag", "protocol_note"])
        w.writerows(rows)
    for (model, split), table in wide.items():
        path = os.path.join(out, "labels", "aggregated", "%s_%s_predictions_wide.csv" % (model, split))
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["sample_id"] + table["configs"])
            w.writerows(table["rows"])
    with open(os.path.join(out, "items_answers.jsonl"), "w") as f:
        for split in SPLITS:
            for i, it in enumerate(items(split)):
                line = {"item_id": it, "task": split, "answer": gold[(split, it)]}
                if split != "MLVU":
                    line["category"] = CATEGORIES[i % len(CATEGORIES)]
                f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
