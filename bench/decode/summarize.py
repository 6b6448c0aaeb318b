"""Turns the JSON lines of t2t-bench-decode and reference_decode.py into the
benchmark's table: medians over the runs of each side per (model, beam,
batch), ours / PyTorch in wall-clock rate and in CPU time (user + system of
the timed decoding, far less disturbed by other load on the machine), peak
RSS, and how often the two sides' best hypotheses are the same ids. Exits
non-zero when the sides did not decode the same sources.

  summarize.py results.jsonl [IDS_DIR]

IDS_DIR holds <side>-<model>-beam<B>-batch<N>.ids files (--write_ids).
"""
import json
import os
import statistics
import sys

TARGET = {(4, 32): 2.0}  # ours / PyTorch, issue 5


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def ids_name(side, model, beam, batch):
    return "%s-%s-beam%d-batch%d.ids" % (side, model.replace("/", "_"), beam, batch)


def agreement(ids_dir, model, beam, batch):
    """(sentences with equal ids, sentences) between the t2t and pytorch files."""
    if not ids_dir:
        return None
    paths = [os.path.join(ids_dir, ids_name(s, model, beam, batch)) for s in ("t2t", "pytorch")]
    if not all(os.path.exists(p) for p in paths):
        return None
    ours, theirs = (open(p).read().splitlines() for p in paths)
    if len(ours) != len(theirs):
        return 0, max(len(ours), len(theirs))
    return sum(a == b for a, b in zip(ours, theirs)), len(ours)


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    ids_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    for r in rows:  # ours with an allocator preloaded is a row of its own
        if r["side"] == "t2t" and r.get("preload"):
            r["side"] = "t2t+" + r["preload"].split(".so")[0].replace("lib", "", 1)
    configs = list(dict.fromkeys((r["model"], r["beam_size"], r["batch_size"]) for r in rows))
    sides = list(dict.fromkeys(r["side"] for r in rows))
    ok = True
    print("| model | beam | batch | side | runs | sentences/s | output tokens/s "
          "| sentences per CPU-second | peak RSS MiB | ÷ PyTorch (wall) | ÷ PyTorch (CPU) "
          "| same ids | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model, beam, batch in configs:
        by_side = {s: [r for r in rows if (r["model"], r["beam_size"], r["batch_size"], r["side"])
                       == (model, beam, batch, s)] for s in sides}
        ref = by_side.get("pytorch", [])
        same = agreement(ids_dir, model, beam, batch)
        for side, runs in by_side.items():
            if not runs:
                continue
            ratio = cpu_ratio = target = agree = ""
            if ref and side != "pytorch":
                ratio = "%.2f×" % (median(runs, "sentences_per_s") / median(ref, "sentences_per_s"))
                cpu_ratio = "%.2f×" % (median(ref, "cpu_seconds") / median(runs, "cpu_seconds"))
                if runs[0]["sources"] != ref[0]["sources"]:
                    print("MISMATCH %s beam %d batch %d: %s decoded sources %d, pytorch %d" % (
                        model, beam, batch, side, runs[0]["sources"], ref[0]["sources"]),
                        file=sys.stderr)
                    ok = False
            if side == "t2t":
                if same:
                    agree = "%d/%d" % same
                if (beam, batch) in TARGET:
                    target = "≥ %.1f×" % TARGET[(beam, batch)]
            print("| %s | %d | %d | %s | %d | %.1f | %.0f | %.1f | %.0f | %s | %s | %s | %s |" % (
                model, beam, batch, side, len(runs), median(runs, "sentences_per_s"),
                median(runs, "output_tokens_per_s"),
                runs[0]["sentences"] / median(runs, "cpu_seconds"), median(runs, "peak_rss_mib"),
                ratio, cpu_ratio, agree, target))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
