"""The table of bench/python/run.sh: medians over the runs, sentences/s, and
how many sentences each side translated as t2t-decoder did."""
import json
import statistics
import sys


def main(results_path, work):
    rows = [json.loads(line) for line in open(results_path)]
    n = rows[0]["sentences"]

    def median(side, key, split=None):
        vals = [r[key] for r in rows if r["side"] == side and r.get(key) is not None
                and (split is None or r.get("split") == split)]
        return statistics.median(vals) if vals else None

    def same(name):
        a = open(f"{work}/decoder-2x1.out", encoding="utf-8").read().split("\n")
        b = open(f"{work}/{name}.out", encoding="utf-8").read().split("\n")
        return sum(x == y for x, y in zip(a, b) if x or y), n

    dec = median("decoder", "cold_s")
    print(f"{n} sentences; medians of {sum(r['side'] == 'decoder' for r in rows)} runs")
    print("| side | decoding, s | sentences/s | vs t2t-decoder | same output as t2t-decoder |")
    print("|---|---|---|---|---|")
    print(f"| t2t-decoder (binary; process {median('decoder', 'process_s'):.2f} s) | {dec:.3f} "
          f"| {n / dec:.1f} | 1.000 | |")
    for key, label in (("cold_s", "first call"), ("warm_s", "second call")):
        s = median("python", key)
        print(f"| t2t.Translator.translate, {label} | {s:.3f} | {n / s:.1f} | {dec / s:.3f} "
              f"| {'%d / %d' % same('python-2x1')} |")
    print(f"| (import t2t {median('python', 'import_s'):.2f} s, Translator() "
          f"{median('python', 'load_s'):.2f} s) | | | | |")
    for split in ("2x1", "1x2"):
        for key, label in (("cold_s", "first call"), ("warm_s", "second call")):
            s = median("ctranslate2", key, split)
            print(f"| CTranslate2 {split}, {label} | {s:.3f} | {n / s:.1f} | {dec / s:.3f} "
                  f"| {'%d / %d' % same('ctranslate2-' + split)} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
