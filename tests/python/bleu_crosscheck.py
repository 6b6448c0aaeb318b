#!/usr/bin/env python3
"""Scores two files with the reference Python scorers, for tests/metrics/test_bleu_tool.cc.

  bleu_crosscheck.py sacrebleu HYP REF   # sacreBLEU 2.x: each tokenizer, cased and lowercased
  bleu_crosscheck.py t2t HYP REF         # T2T's bleu_hook, cased and uncased
  bleu_crosscheck.py tokenize TOK FILE   # sacreBLEU's tokenizer TOK on each line

Lines are split on "\\n" only (as the C++ side does), so the files may hold
any other whitespace inside a line.
"""
import sys


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def main():
    mode = sys.argv[1]
    if mode == "sacrebleu":
        from sacrebleu.metrics import BLEU
        hyps, refs = read_lines(sys.argv[2]), read_lines(sys.argv[3])
        for tok in ("13a", "intl", "zh", "char", "none"):
            for lc in (False, True):
                s = BLEU(tokenize=tok, lowercase=lc).corpus_score(hyps, [refs])
                print(f"{tok} {int(lc)} {s.score:.17g} {s.format()}")
    elif mode == "t2t":
        from tensor2tensor.utils import bleu_hook
        hyps, refs = read_lines(sys.argv[2]), read_lines(sys.argv[3])
        for cased in (True, False):
            h = hyps if cased else [x.lower() for x in hyps]
            r = refs if cased else [x.lower() for x in refs]
            bleu = 100 * bleu_hook.compute_bleu([bleu_hook.bleu_tokenize(x) for x in r],
                                                [bleu_hook.bleu_tokenize(x) for x in h])
            print(f"{int(cased)} {float(bleu):.17g}")
    elif mode == "tokenize":
        from sacrebleu.metrics import BLEU
        tokenizer = BLEU(tokenize=sys.argv[2]).tokenizer
        for line in read_lines(sys.argv[3]):
            print(tokenizer(line.rstrip()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
