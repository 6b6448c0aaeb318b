"""One side of the Python benchmark (run.sh), in a process of its own: decodes
SOURCE with beam search and prints one JSON line.

  --side=python       t2t.Translator(...).translate(lines), the first call of
                      the process (cold) and a second one (warm)
  --side=decoder      the t2t-decoder binary on the file (its own decode time,
                      from its log, and the process's wall time)
  --side=ctranslate2  ctranslate2.Translator.translate_batch on the exported
                      model, the ids encoded by t2t.problem (not timed), T2T's
                      search as CTranslate2 allows it (bench/decode/ctranslate2_decode.py)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

# T2T's search done by CTranslate2: the decoding benchmark's own definition.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "decode"))
from ctranslate2_decode import t2t_best_ids, translate_options  # noqa: E402


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def python_side(args, lines):
    t0 = time.time()
    import t2t
    import_s = time.time() - t0
    t0 = time.time()
    tr = t2t.Translator(args.run_dir, data_dir=args.data_dir, problem=args.problem,
                        threads=args.threads, batch_size=args.batch_size)
    load_s = time.time() - t0
    runs = []
    for _ in range(2):
        t0 = time.time()
        out = tr.translate(lines, beam_size=args.beam_size, alpha=args.alpha)
        runs.append(time.time() - t0)
    return dict(import_s=import_s, load_s=load_s, cold_s=runs[0], warm_s=runs[1]), out


def decoder_side(args, lines):
    out_path = os.path.join(args.work, "decoder.out")
    t0 = time.time()
    r = subprocess.run([os.path.join(args.build, "t2t-decoder"), f"--problem={args.problem}",
                        "--model=transformer", f"--data_dir={args.data_dir}",
                        f"--output_dir={args.run_dir}", f"--threads={args.threads}",
                        f"--decode_hparams=beam_size={args.beam_size},alpha={args.alpha},"
                        f"batch_size={args.batch_size}",
                        f"--decode_from_file={args.source}", f"--decode_to_file={out_path}"],
                       capture_output=True, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit(r.stderr + r.stdout)
    log = r.stdout + r.stderr
    # Its rate has more digits than its seconds.
    m = re.search(r"decoded (\d+) sentences? in [0-9.]+ s: ([0-9.]+) sentences/s", log)
    if not m:
        sys.exit("no 'decoded N sentences in S s: R sentences/s' line in t2t-decoder's log:\n"
                 + log[-2000:])
    return (dict(process_s=wall, cold_s=int(m.group(1)) / float(m.group(2))),
            read_lines(out_path))


def ctranslate2_side(args, lines):
    import ctranslate2
    import t2t
    p = t2t.problem(args.problem, args.data_dir)
    tokens = [["<id_%d>" % i for i in p.encode(line, "inputs", eos=False)] for line in lines]
    inter, intra = (int(x) for x in args.split.split("x"))
    t0 = time.time()
    tr = ctranslate2.Translator(args.ct2_dir, device="cpu", inter_threads=inter,
                                intra_threads=intra)
    load_s = time.time() - t0
    # The tokens leave EOS out; the limit counts it (t2t's extra_length: 100).
    options = translate_options(args.beam_size, args.batch_size, max(map(len, tokens)) + 1, 100)

    def best(result):
        return p.decode(t2t_best_ids(result, args.alpha, args.beam_size > 1), "targets")

    runs = []
    for _ in range(2):
        t0 = time.time()
        results = tr.translate_batch(tokens, **options)
        runs.append(time.time() - t0)
    return dict(load_s=load_s, cold_s=runs[0], warm_s=runs[1], split=args.split,
                ctranslate2=ctranslate2.__version__), [best(r) for r in results]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=["python", "decoder", "ctranslate2"], required=True)
    for name in ("run_dir", "data_dir", "problem", "source", "work", "build"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--ct2_dir", default="")
    ap.add_argument("--split", default="2x1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--beam_size", type=int, default=4)
    ap.add_argument("--alpha", type=float, default=0.6)
    ap.add_argument("--batch_size", type=int, default=32)
    args = ap.parse_args()
    lines = read_lines(args.source)
    figures, out = globals()[args.side + "_side"](args, lines)
    with open(os.path.join(args.work, f"{args.side}-{args.split}.out"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(json.dumps(dict(side=args.side, sentences=len(lines), threads=args.threads,
                          beam_size=args.beam_size, batch_size=args.batch_size, **figures)))


if __name__ == "__main__":
    main()
