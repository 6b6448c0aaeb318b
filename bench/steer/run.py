#!/usr/bin/env python3
"""The steering targets of the README's "Steering the output", measured on the
Tatoeba recipe's model (bench/README.md, "Steering the output"):

  terms      constrained decoding with 1-3 reference terms a line: terms met,
             BLEU against the unconstrained search, speed with 1-2 terms
  prefix     the reference's first two characters as a prefix: lines that
             begin with it, speed against the unconstrained search
  ensemble   two seeds of the recipe decoded together: BLEU against the
             better one alone, speed against one model
  alignment  guided alignment: AER of --score_file alignments of the dev
             pairs against eflomal's, BLEU against the same run without it
  same       no option used: translations and speed against --old-build, a
             build from before the steering options (float32 and int8)

Usage: run.py --work W --corpus C [--build B] [--repeats 3] [--pin "taskset -c 1"]
W holds what bench/steer/prepare.sh made: data/, align/, runs/{seed1,seed2,guided}/avg3.
Speeds are the decoder's own "decoded N sentences in X s" (the search, not the
model's loading), medians of --repeats runs taken in turns, one thread.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from alignments import read_lines, write_lines  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {cmd}\n{r.stdout[-3000:]}")
    return r.stdout


class Bench:
    def __init__(self, args):
        self.a = args
        self.out = os.path.join(args.work, "steer")
        os.makedirs(self.out, exist_ok=True)

    def decode(self, run_dir, source, name, decode_hparams="", extra="", data="data"):
        """Decodes `source` with the run's averaged model; returns (output
        path, seconds of search)."""
        out = os.path.join(self.out, name)
        hp = "beam_size=4,alpha=0.6" + ("," + decode_hparams if decode_hparams else "")
        log = run(f"{self.a.pin} {self.a.build}/t2t-decoder --problem=translate_enzh_tatoeba "
                  f"--model=transformer --hparams_set=transformer_tiny "
                  f"--data_dir={os.path.join(self.a.work, data)} "
                  f"--output_dir={os.path.join(self.a.work, 'runs', run_dir, 'avg3')} "
                  f"--decode_hparams={hp} --decode_from_file={source} --decode_to_file={out} "
                  f"--threads=1 {extra}")
        # The rate has more digits than the seconds.
        m = re.search(r"decoded (\d+) sentences in [0-9.]+ s: ([0-9.]+) sentences/s", log)
        if not m:
            sys.exit("no timing line in the decoder's log:\n" + log[-2000:])
        return out, int(m.group(1)) / float(m.group(2))

    def timed(self, variants):
        """variants: name -> (args for decode). Runs each `repeats` times in
        turns; returns name -> (output, median seconds)."""
        times = {k: [] for k in variants}
        outs = {}
        for _ in range(self.a.repeats):
            for k, v in variants.items():
                outs[k], s = self.decode(*v)
                times[k].append(s)
        return {k: (outs[k], statistics.median(times[k])) for k in variants}

    def bleu(self, hyp, ref):
        text = run(f"{self.a.build}/t2t-bleu --translation={hyp} --reference={ref}")
        return float(re.search(r"BLEU\S* = ([0-9.]+)", text).group(1))


def terms(b, corpus):
    a = b.a
    dev_en, dev_zh = os.path.join(corpus, "dev.en"), os.path.join(corpus, "dev.zh")
    align = os.path.join(a.work, "align")
    files = {}
    for most in (3, 2):
        path = os.path.join(b.out, f"terms{most}.all")
        run(f"{sys.executable} {HERE}/alignments.py terms --align {align}/dev.align "
            f"--source {align}/dev.words.en --reference {align}/dev.words.zh --out {path} "
            f"--most {most}")
        files[most] = read_lines(path)
    keep = [i for i, t in enumerate(files[3]) if t and files[2][i]]
    en, zh = read_lines(dev_en), read_lines(dev_zh)
    paths = {}
    for name, lines in (("held.en", [en[i] for i in keep]), ("held.zh", [zh[i] for i in keep]),
                        ("held.terms3", [files[3][i] for i in keep]),
                        ("held.terms2", [files[2][i] for i in keep])):
        paths[name] = os.path.join(b.out, name)
        write_lines(paths[name], lines)
    r = b.timed({
        "plain": ("seed1", paths["held.en"], "held.plain.zh"),
        "terms2": ("seed1", paths["held.en"], "held.terms2.zh", "",
                   f"--constraints_file={paths['held.terms2']}"),
    })
    out3, _ = b.decode("seed1", paths["held.en"], "held.terms3.zh", "",
                       f"--constraints_file={paths['held.terms3']}")
    hyps = read_lines(out3)
    wanted = [t.split("\t") for t in read_lines(paths["held.terms3"])]
    # Whitespace aside, as the search counts them (a term may follow a space).
    met = sum(1 for h, ts in zip(hyps, wanted) for t in ts if t in h.replace(" ", ""))
    total = sum(len(ts) for ts in wanted)
    plain_bleu = b.bleu(r["plain"][0], paths["held.zh"])
    terms_bleu = b.bleu(out3, paths["held.zh"])
    n2 = sum(len(t.split("\t")) for t in read_lines(paths["held.terms2"]))
    print(f"| terms | {len(keep)} dev lines with 1-3 reference terms ({total} terms) | "
          f"terms met {met}/{total} = {100 * met / total:.1f}% | BLEU {terms_bleu:.2f} vs "
          f"{plain_bleu:.2f} unconstrained ({terms_bleu - plain_bleu:+.2f}) | speed with 1-2 terms "
          f"({n2} terms): {r['plain'][1] / r['terms2'][1]:.2f}x unconstrained "
          f"({r['terms2'][1]:.2f} s vs {r['plain'][1]:.2f} s) |")


def prefix(b, corpus):
    en, zh = read_lines(os.path.join(corpus, "dev.en")), read_lines(os.path.join(corpus, "dev.zh"))
    prefixes = [z[:2] if len(z) >= 4 else "" for z in zh]
    ppath = os.path.join(b.out, "dev.prefix")
    write_lines(ppath, prefixes)
    src = os.path.join(corpus, "dev.en")
    r = b.timed({"plain": ("seed1", src, "dev.plain.zh"),
                 "prefix": ("seed1", src, "dev.prefix.zh", "", f"--prefix_file={ppath}")})
    hyps = read_lines(r["prefix"][0])
    used = [(h, p) for h, p in zip(hyps, prefixes) if p]
    ok = sum(1 for h, p in used if h.startswith(p))
    print(f"| prefix | {len(used)} of {len(en)} dev lines with a 2-character prefix | begins with "
          f"it: {ok}/{len(used)} = {100 * ok / len(used):.1f}% | speed {r['plain'][1] / r['prefix'][1]:.2f}x "
          f"unconstrained ({r['prefix'][1]:.2f} s vs {r['plain'][1]:.2f} s) |")


def ensemble(b, corpus):
    src, ref = os.path.join(corpus, "dev.en"), os.path.join(corpus, "dev.zh")
    seed2 = os.path.join(b.a.work, "runs", "seed2", "avg3")
    r = b.timed({"one": ("seed1", src, "dev.seed1.zh"),
                 "two": ("seed1", src, "dev.ensemble.zh", "",
                         f"--ensemble={seed2} --ensemble_weights=1,1")})
    other, _ = b.decode("seed2", src, "dev.seed2.zh")
    s1, s2, both = b.bleu(r["one"][0], ref), b.bleu(other, ref), b.bleu(r["two"][0], ref)
    print(f"| ensemble | seeds 1 and 2, dev (1,000) | BLEU {both:.2f} vs {max(s1, s2):.2f} for the "
          f"better one alone ({s1:.2f}, {s2:.2f}): {both - max(s1, s2):+.2f} | speed "
          f"{r['one'][1] / r['two'][1]:.2f}x one model's ({r['two'][1]:.2f} s vs {r['one'][1]:.2f} s) |")


def alignment(b, corpus):
    src, ref = os.path.join(corpus, "dev.en"), os.path.join(corpus, "dev.zh")
    pairs = os.path.join(b.out, "dev.pairs")
    write_lines(pairs, [f"{e}\t{z}" for e, z in zip(read_lines(src), read_lines(ref))])
    rows = []
    for run_dir in ("guided", "seed1"):
        for mode in ("hard", "0.3"):
            out = os.path.join(b.out, f"dev.{run_dir}.{mode}.align")
            run(f"{b.a.build}/t2t-decoder --problem=translate_enzh_tatoeba --model=transformer "
                f"--hparams_set=transformer_tiny --data_dir={os.path.join(b.a.work, 'data')} "
                f"--output_dir={os.path.join(b.a.work, 'runs', run_dir, 'avg3')} "
                f"--decode_hparams=alignment={mode} --score_file={pairs} --decode_to_file={out} "
                f"--threads=2")
            aer = run(f"{sys.executable} {HERE}/alignments.py aer --reference "
                      f"{os.path.join(b.a.work, 'align', 'dev.align')} --hypothesis {out}").strip()
            rows.append(f"{run_dir} alignment={mode}: {aer}")
    g, _ = b.decode("guided", src, "dev.guided.zh")
    s, _ = b.decode("seed1", src, "dev.seed1.zh")
    bg, bs = b.bleu(g, ref), b.bleu(s, ref)
    print(f"| alignment | dev (1,000) against eflomal's symmetrised alignments | "
          + "; ".join(rows) + f" | BLEU {bg:.2f} guided vs {bs:.2f} without ({bg - bs:+.2f}) |")


def same(b, corpus):
    """No steering option: the old build's translations and speed against
    this one's, float32 and int8."""
    src = os.path.join(corpus, "dev.en")
    new_build, old_build = b.a.build, b.a.old_build
    rows = []
    for quant in ("none", "int8"):
        times = {"old": [], "new": []}
        outs = {}
        for _ in range(b.a.repeats):
            for side, build in (("old", old_build), ("new", new_build)):
                b.a.build = build
                outs[side], t = b.decode("seed1", src, f"dev.{side}.{quant}.zh", "",
                                         f"--quantize={quant}")
                times[side].append(t)
        b.a.build = new_build
        identical = open(outs["old"], "rb").read() == open(outs["new"], "rb").read()
        old_t, new_t = statistics.median(times["old"]), statistics.median(times["new"])
        rows.append(f"{quant}: {'byte-identical' if identical else 'DIFFERENT'}, "
                    f"{new_t:.2f} s vs {old_t:.2f} s before ({old_t / new_t:.2f}x)")
    print(f"| no option | dev (1,000), old build {old_build} | " + "; ".join(rows) + " | | |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--build", default="build")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--pin", default="")
    p.add_argument("--old-build", default="", help="a build from before the steering options, "
                   "for 'same'")
    p.add_argument("--only", default="terms,prefix,ensemble,alignment,same")
    a = p.parse_args()
    b = Bench(a)
    print("| feature | set | result | | |\n|---|---|---|---|---|")
    for name in a.only.split(","):
        {"terms": terms, "prefix": prefix, "ensemble": ensemble, "alignment": alignment,
         "same": same}[name](b, a.corpus)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
