#!/usr/bin/env python3
"""Reference word alignments for the steering benchmarks, and their scores.

  alignments.py make --corpus DIR --out DIR [--eflomal eflomal-align]
      Splits DIR/train.{en,zh} and DIR/dev.{en,zh} into the words t2t's
      alignments count (t2t.alignment_words), aligns train and dev together
      with eflomal in both directions, symmetrises them (grow-diag-final-and)
      and writes OUT/train.align and OUT/dev.align (Pharaoh, one line per
      pair), plus OUT/*.words.* (the word-split text).
  alignments.py aer --reference REF --hypothesis HYP
      Alignment error rate of HYP against REF, every reference link sure:
      1 - 2|A & S| / (|A| + |S|), summed over the corpus.
  alignments.py terms --align A --source SRC --reference REF --out FILE [--seed N] [--most 3]
      One to --most reference terms per line for constrained decoding: target
      word runs (of two or more characters for Chinese) whose links all lead
      to one source word, chosen at random; one tab-separated line per pair.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").rstrip("\r") for line in f]


def write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
    os.replace(tmp, path)


def parse(line):
    pairs = set()
    for item in line.split():
        i, j = item.split("-")
        pairs.add((int(i), int(j)))
    return pairs


def pharaoh(pairs):
    return " ".join(f"{i}-{j}" for i, j in sorted(pairs))


def grow_diag_final_and(forward, reverse):
    """Koehn's symmetrisation of two directional alignments (sets of
    (source, target) pairs)."""
    union = forward | reverse
    alignment = set(forward & reverse)
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]

    def source_aligned(i):
        return any(a[0] == i for a in alignment)

    def target_aligned(j):
        return any(a[1] == j for a in alignment)

    added = True
    while added:
        added = False
        for (i, j) in sorted(alignment):
            for di, dj in neighbours:
                n = (i + di, j + dj)
                if n in union and n not in alignment and (
                        not source_aligned(n[0]) or not target_aligned(n[1])):
                    alignment.add(n)
                    added = True
    # final-and: links of either direction whose two words are both unaligned.
    for direction in (forward, reverse):
        for (i, j) in sorted(direction):
            if not source_aligned(i) and not target_aligned(j):
                alignment.add((i, j))
    return alignment


def make(args):
    import t2t
    os.makedirs(args.out, exist_ok=True)
    sides = {}
    for lang in ("en", "zh"):
        train = read_lines(os.path.join(args.corpus, f"train.{lang}"))
        dev = read_lines(os.path.join(args.corpus, f"dev.{lang}"))
        sides[lang] = [" ".join(t2t.alignment_words(s)) for s in train + dev]
        write_lines(os.path.join(args.out, f"train.words.{lang}"), sides[lang][:len(train)])
        write_lines(os.path.join(args.out, f"dev.words.{lang}"), sides[lang][len(train):])
    n_train = len(read_lines(os.path.join(args.corpus, "train.en")))
    with tempfile.TemporaryDirectory() as tmp:
        src, tgt = os.path.join(tmp, "all.en"), os.path.join(tmp, "all.zh")
        write_lines(src, sides["en"])
        write_lines(tgt, sides["zh"])
        fwd, rev = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        print(f"eflomal: aligning {len(sides['en'])} pairs in both directions", file=sys.stderr)
        subprocess.run([args.eflomal, "-s", src, "-t", tgt, "-f", fwd, "-r", rev, "--overwrite"],
                       check=True)
        forward, reverse = read_lines(fwd), read_lines(rev)
    sym = [pharaoh(grow_diag_final_and(parse(f), parse(r))) for f, r in zip(forward, reverse)]
    write_lines(os.path.join(args.out, "train.align"), sym[:n_train])
    write_lines(os.path.join(args.out, "dev.align"), sym[n_train:])
    print(f"wrote {args.out}/train.align ({n_train} lines) and dev.align "
          f"({len(sym) - n_train} lines)", file=sys.stderr)


def aer(args):
    ref, hyp = read_lines(args.reference), read_lines(args.hypothesis)
    if len(ref) != len(hyp):
        sys.exit(f"{args.reference} has {len(ref)} lines, {args.hypothesis} {len(hyp)}")
    both = total_ref = total_hyp = 0
    for r, h in zip(ref, hyp):
        s, a = parse(r), parse(h.split("\t")[-1] if "\t" in h else h)
        both += len(s & a)
        total_ref += len(s)
        total_hyp += len(a)
    value = 1 - 2 * both / max(1, total_ref + total_hyp)
    print(f"AER {100 * value:.1f}% (precision {100 * both / max(1, total_hyp):.1f}%, "
          f"recall {100 * both / max(1, total_ref):.1f}%, {total_hyp} links against {total_ref})")


def is_cjk(word):
    return all(0x3400 <= ord(c) <= 0x9FFF or 0xF900 <= ord(c) <= 0xFAFF for c in word)


def terms(args):
    rng = random.Random(args.seed)
    links = read_lines(args.align)
    src_words = [s.split() for s in read_lines(args.source)]
    tgt_words = [s.split() for s in read_lines(args.reference)]
    out = []
    for line, sw, tw in zip(links, src_words, tgt_words):
        by_source = {}
        for i, j in parse(line):
            by_source.setdefault(i, set()).add(j)
        candidates = []
        for i, js in sorted(by_source.items()):
            js = sorted(js)
            # A contiguous run of target words that only this source word links to.
            if js != list(range(js[0], js[-1] + 1)):
                continue
            if any(i2 != i and js2 & set(js) for i2, js2 in by_source.items()):
                continue
            text = "".join(tw[j] for j in js)
            if not all(is_cjk(tw[j]) for j in js) or len(text) < 2 or not sw[i].isalpha():
                continue
            candidates.append(text)
        rng.shuffle(candidates)
        chosen = candidates[:rng.randint(1, args.most)]
        out.append("\t".join(chosen))
    write_lines(args.out, out)
    used = sum(1 for line in out if line)
    print(f"{args.out}: terms for {used} of {len(out)} lines, "
          f"{sum(len(line.split(chr(9))) for line in out if line)} in all", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("--corpus", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--eflomal", default="eflomal-align")
    a = sub.add_parser("aer")
    a.add_argument("--reference", required=True)
    a.add_argument("--hypothesis", required=True)
    t = sub.add_parser("terms")
    t.add_argument("--align", required=True)
    t.add_argument("--source", required=True)
    t.add_argument("--reference", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--most", type=int, default=3, help="at most this many terms a line")
    args = p.parse_args()
    {"make": make, "aer": aer, "terms": terms}[args.command](args)


if __name__ == "__main__":
    main()
