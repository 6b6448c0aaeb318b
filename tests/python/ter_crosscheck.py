#!/usr/bin/env python3
"""Scores files with sacreBLEU's TER, for tests/metrics/test_ter.cc.

  ter_crosscheck.py corpus HYP REF [REF...]          # corpus TER
  ter_crosscheck.py sentence STEP HYP REF [REF...]   # sentence TER of every STEP-th line
  ter_crosscheck.py tokenize FILE                    # TercomTokenizer on each line

Each mode goes through all 16 combinations of the options and starts each
line with them as 0/1: normalized, no_punct, asian_support, case_sensitive.
Floats are printed with %.17g, so the C++ side can compare them exactly;
signatures without their version.

Lines are split on "\\n" only (as the C++ side does), so they may hold any
other whitespace; invalid UTF-8 reads as U+FFFD.
"""
import itertools
import sys

from bleu_crosscheck import read_lines


def combinations():
    from sacrebleu.metrics import TER
    for flags in itertools.product((False, True), repeat=4):
        normalized, no_punct, asian_support, case_sensitive = flags
        metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                     case_sensitive=case_sensitive)
        yield " ".join(str(int(f)) for f in flags), metric


def signature(metric):
    parts = metric.get_signature().format().split("|")
    return "|".join(p for p in parts if not p.startswith("version:"))


def main():
    sys.stdout.reconfigure(encoding="utf-8")
    mode = sys.argv[1]
    if mode == "corpus":
        hyps = read_lines(sys.argv[2])
        refs = [read_lines(p) for p in sys.argv[3:]]
        for flags, metric in combinations():
            s = metric.corpus_score(hyps, refs)
            print(f"corpus {flags} {s.score:.17g} {s.num_edits} {s.ref_length:.17g} "
                  f"{signature(metric)} {s.format()}")
    elif mode == "sentence":
        step = int(sys.argv[2])
        hyps = read_lines(sys.argv[3])
        refs = [read_lines(p) for p in sys.argv[4:]]
        for flags, metric in combinations():
            for i in range(0, len(hyps), step):
                s = metric.sentence_score(hyps[i], [r[i] for r in refs])
                print(f"sentence {flags} {i} {s.score:.17g} {s.num_edits} {s.ref_length:.17g}")
    elif mode == "tokenize":
        lines = read_lines(sys.argv[2])
        for flags, metric in combinations():
            for i, line in enumerate(lines):
                print(f"tok {flags} {i} {metric.tokenizer(line.rstrip())}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
