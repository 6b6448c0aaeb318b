"""Turns the JSON lines of t2t-bench-train and reference_train.py into the
benchmark's table: medians over the runs of each side, our/their ratio and
the targets of issue 4. Exits non-zero when the two sides did not train the
same thing (parameter count or batches differ).

  summarize.py results.jsonl
"""
import json
import statistics
import sys

# Ours / eager PyTorch, and the fraction of the matmul peak, per set.
TARGETS = {"transformer_tiny": (1.3, None), "transformer_small": (1.3, None),
           "transformer_base": (1.0, 0.5)}


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    sets = list(dict.fromkeys(r["hparams_set"] for r in rows))
    sides = list(dict.fromkeys(r["side"] for r in rows))
    ok = True
    print("| set | side | runs | params | target tok/s | GFLOP/s | % of matmul peak "
          "| peak RSS MiB | ours / side | target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in sets:
        by_side = {side: [r for r in rows if r["hparams_set"] == s and r["side"] == side]
                   for side in sides}
        ours = by_side.get("t2t", [])
        for side in sides:
            runs = by_side[side]
            if not runs:
                continue
            ratio, target = "", ""
            if ours and side != "t2t":
                ratio = "%.2f×" % (median(ours, "target_tokens_per_s")
                                   / median(runs, "target_tokens_per_s"))
                if side == "pytorch":
                    target = "≥ %.1f×" % TARGETS.get(s, (1.0, None))[0]
                if runs[0]["params"] != ours[0]["params"] or runs[0]["batches"] != ours[0]["batches"]:
                    print("MISMATCH %s: %s has %d parameters and batches %d, t2t %d and %d" % (
                        s, side, runs[0]["params"], runs[0]["batches"], ours[0]["params"],
                        ours[0]["batches"]), file=sys.stderr)
                    ok = False
            elif side == "t2t" and TARGETS.get(s, (0, None))[1]:
                target = "≥ %d%% of peak" % (100 * TARGETS[s][1])
            print("| %s | %s | %d | %s | %.0f | %.1f | %.1f%% (of %.0f) | %.0f | %s | %s |" % (
                s.replace("transformer_", ""), side, len(runs), f"{runs[0]['params']:,}",
                median(runs, "target_tokens_per_s"), median(runs, "flops_per_s") / 1e9,
                100 * median(runs, "fraction_of_peak"),
                median(runs, "peak_matmul_flops_per_s") / 1e9, median(runs, "peak_rss_mib"),
                ratio, target))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
