"""Independent oracle of the study's per-model, per-split table, computed from a per_item.csv (the
released per-item format, ECOSYSTEM.md) with the definitions of METRICS.md alone: no framesweep code.

usage: metrics_oracle.py PER_ITEM.csv [--cost columns|names]

For every (model, split) it takes the configs that model has on that split (its grid), the items with a
row in every one of them (paired; the rest are dropped), and prints one JSON object:

  {"tables": [{"model", "split", "items", "dropped_items", "configs": [{"id", "cost", "text_only"}],
               "accuracy": {config: points}, "best_fixed", "best_config", "oracle_accuracy",
               "oracle_headroom", "visual_confusion_rate", "visual_confusion_rate_visual_only",
               "text_overwrite_rate", "text_overwrite_rate_of_text_correct"}, …]}

sorted by model, then split. Points and rates are unrounded floats (0–100).

- c_i(k) is the row's `correct` (0/1; true/false).
- cost: a config of frame_count 0 is text only and costs 0; else frame_count × pixel_count (the per-frame
  pixels), or frame_count when pixel_count is empty. With --cost names the budget comes from the config
  name instead ({N}f_{K}k: N × K·1000; {N}f_input{S}: N × S²; textonly/no_visual/blind/text: 0), as a
  wide table imported without columns has it. Two configs are ordered only when their costs differ.
- best_fixed = max_k accuracy[k] (best_config: the lowest cost among the ties, then the smallest id);
  oracle_accuracy = 100 · Σ_i max_k c_i(k) / N; oracle_headroom = oracle − best_fixed.
- visual_confusion_rate = 100 · #{i : ∃ a, b with cost(a) < cost(b), c_i(a) = 1, c_i(b) = 0} / N
  (text only the cheapest); _visual_only: the same over the visual configs.
- text_overwrite_rate = 100 · #{i : c_i(text) = 1 and ∃ visual v with c_i(v) = 0} / N (null without a
  text-only config); _of_text_correct: the same count / #{i : c_i(text) = 1} (null when none).

Python 3 standard library only."""

import csv
import json
import re
import sys

TEXT_NAMES = re.compile(r"^(text|text[-_ ]?only|no[-_ ]?visual|no[-_ ]?video|blind)$", re.I)


def name_cost(config):
    if TEXT_NAMES.match(config):
        return 0, True
    m = re.match(r"^(\d+)f(?:_(\d+)k|_input(\d+))?$", config)
    if not m:
        sys.exit("config %r: no budget in its name" % config)
    frames = int(m.group(1))
    if m.group(2):
        return frames * int(m.group(2)) * 1000, False
    if m.group(3):
        return frames * int(m.group(3)) ** 2, False
    return frames, False


def column_cost(row):
    frames = int(float(row["frame_count"]))
    if frames == 0:
        return 0, True
    px = row.get("pixel_count", "").strip()
    return (frames * int(float(px)) if px else frames), False


def verdict(cell):
    v = cell.strip().lower()
    if v in ("1", "1.0", "true"):
        return 1
    if v in ("0", "0.0", "false"):
        return 0
    sys.exit("correct %r is not 0/1" % cell)


def table(model, split, rows, by_names):
    cost, text = {}, {}
    answers = {}
    for r in rows:
        c = r["config"]
        cost[c], text[c] = name_cost(c) if by_names else column_cost(r)
        answers.setdefault(r["sample_id"], {})[c] = verdict(r["correct"])
    configs = sorted(cost, key=lambda c: (cost[c], c))
    paired = sorted(i for i, a in answers.items() if all(c in a for c in configs))
    n = len(paired)
    acc = {c: 100.0 * sum(answers[i][c] for i in paired) / n for c in configs}
    best = max(acc.values())
    best_config = min((c for c in configs if acc[c] == best), key=lambda c: (cost[c], c))
    oracle = 100.0 * sum(max(answers[i][c] for c in configs) for i in paired) / n

    def confused(i, cs):
        return any(cost[a] < cost[b] and answers[i][a] == 1 and answers[i][b] == 0 for a in cs for b in cs)

    visual = [c for c in configs if not text[c]]
    texts = [c for c in configs if text[c]]
    out = {
        "model": model, "split": split, "items": n, "dropped_items": len(answers) - n,
        "configs": [{"id": c, "cost": cost[c], "text_only": text[c]} for c in configs],
        "accuracy": acc, "best_fixed": best, "best_config": best_config, "oracle_accuracy": oracle,
        "oracle_headroom": oracle - best,
        "visual_confusion_rate": 100.0 * sum(confused(i, configs) for i in paired) / n,
        "visual_confusion_rate_visual_only": 100.0 * sum(confused(i, visual) for i in paired) / n,
        "text_overwrite_rate": None, "text_overwrite_rate_of_text_correct": None,
    }
    if texts:
        t = texts[0]
        text_right = [i for i in paired if answers[i][t] == 1]
        over = sum(1 for i in text_right if any(answers[i][v] == 0 for v in visual))
        out["text_overwrite_rate"] = 100.0 * over / n
        if text_right:
            out["text_overwrite_rate_of_text_correct"] = 100.0 * over / len(text_right)
    return out


def main(argv):
    by_names = False
    if len(argv) == 3 and argv[1] == "--cost" and argv[2] in ("columns", "names"):
        by_names = argv[2] == "names"
    elif len(argv) != 1:
        sys.exit(__doc__)
    with open(argv[0], newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    groups = {}
    for r in rows:
        groups.setdefault((r["model"], r["split"]), []).append(r)
    tables = [table(m, s, groups[(m, s)], by_names) for (m, s) in sorted(groups)]
    json.dump({"tables": tables}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
