"""Table of vs_ctranslate2.sh's results: medians per configuration, each
t2t precision against CTranslate2's best thread split in the same
precision (for each of its searches), and how many sentences got t2t
float32's output ids.

  summarize_vs_ctranslate2.py RESULTS.jsonl IDS_DIR
"""
import collections
import json
import os
import statistics
import sys


def main():
    results_path, ids_dir = sys.argv[1:3]
    rows = collections.defaultdict(list)
    rss = {}
    for line in open(results_path):
        r = json.loads(line)
        if r["side"] == "t2t":
            precision = "int8" if r["model"].endswith("-int8") else "float32"
            key = ("t2t", precision, "t2t", "%d parallel" % r["parallel_batches"])
            ids = "t2t-" + ("int8" if precision == "int8" else "none")
        else:
            precision = r["model"].replace("ct2-", "")
            split = "%dx%d" % (r["inter_threads"], r["intra_threads"])
            key = ("ctranslate2", precision, r["search"], split)
            ids = "ct2-%s-%s-%s" % (precision, r["search"], split)
        rows[key].append(r["sentences_per_s"])
        rss[key] = (r["peak_rss_mib"], ids)
    reference = open(os.path.join(ids_dir, "t2t-none")).read().splitlines()

    def identical(name):
        got = open(os.path.join(ids_dir, name)).read().splitlines()
        return sum(a == b for a, b in zip(reference, got))

    medians = {k: statistics.median(v) for k, v in rows.items()}
    best_ct2 = {}
    for (engine, precision, search, _), m in medians.items():
        if engine == "ctranslate2":
            best_ct2[(precision, search)] = max(best_ct2.get((precision, search), 0), m)
    print("| engine | precision | search | threads | sentences/s | peak RSS MiB "
          "| same ids as t2t float32 | t2t / CT2 best (T2T search) | t2t / CT2 best (own search) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(medians, key=lambda k: (k[1], k[0] != "t2t", k[2], k[3])):
        engine, precision, search, split = key
        ratios = ["", ""]
        if engine == "t2t":
            ratios = ["%.2f×" % (medians[key] / best_ct2[(precision, s)])
                      for s in ("t2t", "own") if (precision, s) in best_ct2]
        peak, ids = rss[key]
        print("| %s | %s | %s | %s | %.0f | %.0f | %d/%d | %s |" % (
            engine, precision, search, split, medians[key], peak, identical(ids),
            len(reference), " | ".join(ratios) if ratios != ["", ""] else " | "))


if __name__ == "__main__":
    main()
