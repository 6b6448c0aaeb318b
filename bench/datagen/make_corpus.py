"""Writes a synthetic English-Chinese parallel corpus of news-length sentences.

The datagen benchmark needs WMT-sized input without downloading WMT. Words
are drawn from Zipf-distributed vocabularies (30k English word forms made
of syllables; 30k Chinese words of one to four characters from 4,000 CJK
characters, written without spaces), so vocabulary learning and encoding
see realistic token statistics; the sentences mean nothing.

  python3 make_corpus.py --pairs 250000 --out DIR   # DIR/train.en, train.zh, dev.en, dev.zh
"""
import argparse
import bisect
import itertools
import os
import random


def zipf_sampler(n, rng, s=1.07):
    weights = [1.0 / (k ** s) for k in range(1, n + 1)]
    cum = list(itertools.accumulate(weights))
    total = cum[-1]
    return lambda: bisect.bisect_left(cum, rng.random() * total)


def english_words(rng, n):
    onsets = ["", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w",
              "br", "ch", "cl", "cr", "dr", "fr", "gr", "pl", "pr", "sh", "st", "th", "tr"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "ou"]
    codas = ["", "", "n", "r", "s", "t", "l", "nd", "nt", "st", "ng", "rk", "ck"]
    words, seen = [], set()
    while len(words) < n:
        syllables = rng.choice([1, 1, 1, 2, 2, 3])
        w = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                    for _ in range(syllables))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def chinese_words(rng, chars, n):
    char_pick = zipf_sampler(len(chars), rng, s=0.9)
    words, seen = [], set()
    while len(words) < n:
        w = "".join(chars[char_pick()] for _ in range(rng.choice([1, 1, 2, 2, 2, 2, 3, 4])))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def make_pair(rng, en_words, en_pick, zh_words, zh_pick):
    n = max(4, min(80, int(rng.gauss(24, 10))))
    words = [en_words[en_pick()] for _ in range(n)]
    words[0] = words[0].capitalize()
    for i in range(3, n - 1, rng.randint(6, 12)):
        words[i] += ","
    if rng.random() < 0.15:
        words.insert(rng.randrange(n), str(rng.randint(1, 2025)))
    en = " ".join(words) + rng.choice([".", ".", ".", "?", "!"])
    m = max(3, int(n * rng.uniform(0.8, 1.2)))
    words = [zh_words[zh_pick()] for _ in range(m)]
    for i in range(4, m - 1, rng.randint(5, 10)):
        words[i] += "，"
    zh = "".join(words) + rng.choice(["。", "。", "。", "？", "！"])
    return en, zh


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=250000)
    ap.add_argument("--dev", type=int, default=2000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    en_words = english_words(rng, 30000)
    zh_words = chinese_words(rng, [chr(0x4E00 + i) for i in rng.sample(range(0x5000), 4000)], 30000)
    en_pick, zh_pick = zipf_sampler(len(en_words), rng), zipf_sampler(len(zh_words), rng)
    os.makedirs(args.out, exist_ok=True)
    for split, count in (("train", args.pairs), ("dev", args.dev)):
        with open(os.path.join(args.out, split + ".en"), "w", encoding="utf-8") as fe, \
             open(os.path.join(args.out, split + ".zh"), "w", encoding="utf-8") as fz:
            for _ in range(count):
                en, zh = make_pair(rng, en_words, en_pick, zh_words, zh_pick)
                fe.write(en + "\n")
                fz.write(zh + "\n")


if __name__ == "__main__":
    main()
