#!/usr/bin/env python3
"""sacreBLEU's own scores of a hypothesis file against reference files, for the
cross-checks of tests/metrics (BLEU with several references and each option,
chrF, chrF++, TER, sentence level).

  metrics_crosscheck.py CONFIGS HYP REF [REF ...]

CONFIGS is a JSON list of {"metric": "bleu"|"chrf"|"ter", "level":
"corpus"|"sentence", ...keyword arguments of sacreBLEU's metric class}. Prints
one line per config: the corpus score with repr precision, or the sentence
scores separated by spaces. Lines are split on "\\n" only, as t2t splits them.
"""
import json
import sys

from sacrebleu.metrics import BLEU, CHRF, TER

from bleu_crosscheck import read_lines


def main():
    configs = json.loads(open(sys.argv[1], encoding="utf-8").read())
    hyps = read_lines(sys.argv[2])
    refs = [read_lines(p) for p in sys.argv[3:]]
    classes = {"bleu": BLEU, "chrf": CHRF, "ter": TER}
    for config in configs:
        config = dict(config)
        metric = classes[config.pop("metric")](**{k: v for k, v in config.items() if k != "level"})
        if config.get("level") == "sentence":
            scores = [metric.sentence_score(h, [r[i] for r in refs]).score
                      for i, h in enumerate(hyps)]
            print(" ".join(repr(s) for s in scores))
        else:
            score = metric.corpus_score(hyps, refs)
            print(repr(score.score), metric.get_signature().format())


if __name__ == "__main__":
    main()
