"""Decoding as users run it (bench/decode/cold.sh): every figure from a fresh
process, t2t-decoder on the file against CTranslate2 in a process of its own,
same weights, threads, beam, batch and search, alternating over the runs.

  cold.py run --float_dir=A --int8_dir=Q --data_dir=D --problem=P --source=F
              --ct2_dir=C --work=W --build=B --runs=3
      A: a float checkpoint's directory (t2t-avg-all's); Q: the same model
      saved in int8 (t2t-avg-all --quantize=int8); C: CTranslate2's
      conversions of it, C-float32 and C-int8
      every side once per run, then the table; results in W/results.jsonl
      with --shortlist=S (a vmap naming tokens <id_N>, also in C-*/vmap.txt):
      each side again with it (t2t --shortlist, CTranslate2 use_vmap=True);
      with --reference=R: each row's BLEU
  cold.py ctranslate2 --model_dir=C --ids=W/source_ids.json --out=...
      one CTranslate2 process: load, the first translate_batch (cold), a
      second one (warm); one JSON line

t2t's cold figure is its own decoding time (from its log: reading the file,
encoding, decoding, writing), model loading excluded and reported apart:
start-up = the process's wall time less its decoding (libraries, model,
exit), model load = building and loading the model (its log). CTranslate2's
is its first translate_batch over the ids t2t's encoder gave (encoding done
beforehand, outside its process, so that its peak RSS is its own), its
start-up the process's wall time less its two calls, its model load
ctranslate2.Translator(). Peak RSS is each
process's own (getrusage of the child). The warm figures: t2t-bench-decode
after one untimed pass, CTranslate2's second call.

t2t runs twice per precision and run: with T2T's stopping test (its
default, T2T's results) and with --decode_hparams patience set to
CTranslate2's (num_hypotheses / beam of its options: 2), which stops a
sentence where CTranslate2's search stops it, so that both engines decode
the same steps. The second row is the like-for-like comparison of the two
engines; the first is what T2T's search costs on top. With a shortlist,
t2t's rows with it are compared with CTranslate2's best with use_vmap, and
the last column gives t2t with a shortlist against t2t without.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctranslate2_decode import t2t_best_ids, t2t_search_options, translate_options  # noqa: E402


# t2t's rows: (label, --decode_hparams patience); the second stops as
# CTranslate2 does with the options translate_options gives it.
def stop_rules(beam_size):
    ct2 = t2t_search_options(beam_size).get("num_hypotheses", beam_size) / beam_size
    return (("T2T's test", 0.0), (f"patience {ct2:g}", ct2))


def run_child(cmd):
    """Runs cmd; returns (wall seconds, its stdout and stderr together)."""
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.time() - t0
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{out[-3000:]}")
    return wall, out


def child_peak_rss_mib(log):
    m = re.search(r"T2T_PEAK_RSS_KB=(\d+)", log)
    return int(m.group(1)) / 1024.0 if m else None


def timed(cmd):
    """cmd under GNU time, so that the child's own peak RSS comes back."""
    return ["/usr/bin/time", "-f", "T2T_PEAK_RSS_KB=%M"] + cmd


def ctranslate2_side(args):
    import ctranslate2
    with open(args.ids) as f:
        sources = json.load(f)
    tokens = [["<id_%d>" % i for i in ids] for ids in sources]
    inter, intra = (int(x) for x in args.split.split("x"))
    t0 = time.time()
    tr = ctranslate2.Translator(args.model_dir, device="cpu", inter_threads=inter,
                                intra_threads=intra)
    load_s = time.time() - t0
    # The tokens leave EOS out; the limit counts it.
    options = translate_options(args.beam_size, args.batch_size, max(map(len, tokens)) + 1,
                                args.extra_length)
    if args.use_vmap:
        if not os.path.isfile(os.path.join(args.model_dir, "vmap.txt")):
            sys.exit(f"{args.model_dir} has no vmap.txt: export it with --vocab_mapping")
        options["use_vmap"] = True
    runs = []
    for _ in range(2):
        t0 = time.time()
        results = tr.translate_batch(tokens, **options)
        runs.append(time.time() - t0)
    with open(args.out, "w") as f:
        json.dump([t2t_best_ids(r, args.alpha, args.beam_size > 1) for r in results], f)
    print(json.dumps(dict(load_s=load_s, cold_s=runs[0], warm_s=runs[1],
                          ctranslate2=ctranslate2.__version__)))


def shortlist_flags(args, shortlist):
    return [f"--shortlist={args.shortlist}", f"--shortlist_best={args.shortlist_best}"] \
        if shortlist else []


def t2t_decoder(args, precision, out_path, patience, shortlist):
    flags = shortlist_flags(args, shortlist) + [f"--problem={args.problem}", "--model=transformer", f"--data_dir={args.data_dir}",
             f"--output_dir={args.int8_dir if precision == 'int8' else args.float_dir}",
             f"--threads={args.threads}",
             f"--decode_hparams=beam_size={args.beam_size},alpha={args.alpha},"
             f"batch_size={args.batch_size},extra_length={args.extra_length},"
             f"patience={patience}",
             f"--decode_from_file={args.source}", f"--decode_to_file={out_path}"]
    wall, log = run_child(timed([os.path.join(args.build, "t2t-decoder")] + flags))
    # Its rate has more digits than its seconds.
    m = re.search(r"decoded (\d+) sentences? in [0-9.]+ s: ([0-9.]+) sentences/s", log)
    if not m:
        sys.exit("no 'decoded N sentences in S s: R sentences/s' line in t2t-decoder's log:\n"
                 + log[-2000:])
    cold = int(m.group(1)) / float(m.group(2))
    load = re.search(r"loaded in ([0-9.]+) s", log)
    return dict(cold_s=cold, startup_s=wall - cold, load_s=float(load.group(1)) if load else None,
                peak_rss_mib=child_peak_rss_mib(log))


def t2t_warm(args, precision, patience, shortlist):
    flags = shortlist_flags(args, shortlist) + [f"--output_dir={args.int8_dir if precision == 'int8' else args.float_dir}",
             f"--data_dir={args.data_dir}",
             f"--problem={args.problem}", f"--source={args.source}", f"--threads={args.threads}",
             f"--beam_size={args.beam_size}", f"--alpha={args.alpha}",
             f"--batch_size={args.batch_size}", f"--extra_length={args.extra_length}",
             f"--patience={patience}", "--warmup_batches=-1", "--passes=1"]
    _, log = run_child([os.path.join(args.build, "t2t-bench-decode")] + flags)
    line = [l for l in log.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["seconds"]


def run(args):
    import t2t
    os.makedirs(args.work, exist_ok=True)
    problem = t2t.problem(args.problem, args.data_dir)
    with open(args.source, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    ids_path = os.path.join(args.work, "source_ids.json")
    with open(ids_path, "w") as f:
        json.dump([problem.encode(line, "inputs", eos=False) for line in lines], f)
    results_path = os.path.join(args.work, "results.jsonl")
    outputs = {}
    shortlists = (False, True) if args.shortlist else (False,)
    with open(results_path, "w") as results:
        for run_no in range(args.runs):
            for precision in ("float32", "int8"):
                for shortlist in shortlists:
                    for stop, patience in stop_rules(args.beam_size):
                        out_path = os.path.join(
                            args.work, f"t2t-{precision}-p{patience:g}-sl{int(shortlist)}.out")
                        row = dict(side="t2t", precision=precision, split=stop,
                                   shortlist=shortlist,
                                   **t2t_decoder(args, precision, out_path, patience, shortlist))
                        row["warm_s"] = t2t_warm(args, precision, patience, shortlist)
                        with open(out_path, encoding="utf-8") as f:
                            outputs[("t2t", precision, stop, shortlist)] = \
                                f.read().split("\n")[:len(lines)]
                        results.write(json.dumps(row) + "\n")
                    for split in ("2x1", "1x2"):
                        ids_out = os.path.join(args.work,
                                               f"ct2-{precision}-{split}-sl{int(shortlist)}.json")
                        wall, log = run_child(timed([
                            sys.executable, os.path.abspath(__file__), "ctranslate2",
                            f"--model_dir={args.ct2_dir}-{precision}", f"--ids={ids_path}",
                            f"--out={ids_out}", f"--split={split}",
                            f"--beam_size={args.beam_size}", f"--batch_size={args.batch_size}",
                            f"--alpha={args.alpha}", f"--extra_length={args.extra_length}"]
                            + (["--use_vmap"] if shortlist else [])))
                        figures = json.loads(
                            [l for l in log.splitlines() if l.startswith("{")][-1])
                        row = dict(side="ctranslate2", precision=precision, split=split,
                                   shortlist=shortlist, cold_s=figures["cold_s"],
                                   warm_s=figures["warm_s"], load_s=figures["load_s"],
                                   startup_s=wall - figures["cold_s"] - figures["warm_s"],
                                   peak_rss_mib=child_peak_rss_mib(log))
                        with open(ids_out) as f:
                            outputs[("ctranslate2", precision, split, shortlist)] = [
                                problem.decode(ids, "targets") for ids in json.load(f)]
                        results.write(json.dumps(row) + "\n")
                results.flush()
            print(f"run {run_no + 1} of {args.runs} done", file=sys.stderr)
    summarize(results_path, outputs, len(lines), args)


def summarize(results_path, outputs, n, args):
    rows = [json.loads(line) for line in open(results_path)]
    t2t_rules = [stop for stop, _ in stop_rules(args.beam_size)]
    reference = outputs[("t2t", "float32", t2t_rules[0], False)]
    shortlists = (False, True) if args.shortlist else (False,)
    bleu = {}
    if args.reference:
        import t2t
        with open(args.reference, encoding="utf-8") as f:
            refs = [line.rstrip("\n") for line in f][:n]
        bleu = {key: t2t.bleu(texts, [refs]).score for key, texts in outputs.items()}

    def median(side, precision, split, key, shortlist=False):
        return statistics.median(r[key] for r in rows if r["side"] == side and
                                 r["precision"] == precision and r["split"] == split and
                                 r.get("shortlist", False) == shortlist)

    def same(key):
        return sum(a == b for a, b in zip(reference, outputs[key]))

    runs = sum(r["side"] == "t2t" and r["precision"] == "float32" and r["split"] == t2t_rules[0]
               and not r.get("shortlist", False) for r in rows)
    print(f"{n} sentences, beam {args.beam_size}, batch {args.batch_size}, {args.threads} threads;"
          f" medians of {runs} runs"
          + (f"; shortlist {os.path.basename(args.shortlist)}, best {args.shortlist_best or 'all'}"
             if args.shortlist else ""))
    print("| engine | precision | threads | stops a sentence by | shortlist | start-up s "
          "| model load s | cold: sentences/s | cold: t2t / CT2 best | warm: sentences/s "
          "| warm: t2t / CT2 best | cold: shortlist / none | peak RSS MiB "
          "| same text as t2t float32 | BLEU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for precision in ("float32", "int8"):
        for shortlist in shortlists:
            best_cold = min(median("ctranslate2", precision, s, "cold_s", shortlist)
                            for s in ("2x1", "1x2"))
            best_warm = min(median("ctranslate2", precision, s, "warm_s", shortlist)
                            for s in ("2x1", "1x2"))
            for side, split in ([("t2t", stop) for stop in t2t_rules] +
                                [("ctranslate2", "2x1"), ("ctranslate2", "1x2")]):
                cold = median(side, precision, split, "cold_s", shortlist)
                warm = median(side, precision, split, "warm_s", shortlist)
                ratio = (lambda best, s: f"{best / s:.2f}×") if side == "t2t" else \
                    (lambda b, s: "")
                threads, stop = ("parallel batches", split) if side == "t2t" else \
                    (split, t2t_rules[1])
                gain = f"{median(side, precision, split, 'cold_s') / cold:.2f}×" \
                    if shortlist else ""
                key = (side, precision, split, shortlist)
                bleu_cell = f"{bleu[key]:.2f}" if bleu else ""
                print(f"| {side} | {precision} | {threads} | {stop} "
                      f"| {'yes' if shortlist else 'no'} "
                      f"| {median(side, precision, split, 'startup_s', shortlist):.2f} "
                      f"| {median(side, precision, split, 'load_s', shortlist):.3f} "
                      f"| {n / cold:.0f} | {ratio(best_cold, cold)} | {n / warm:.0f} "
                      f"| {ratio(best_warm, warm)} | {gain} "
                      f"| {median(side, precision, split, 'peak_rss_mib', shortlist):.0f} "
                      f"| {same(key)}/{n} | {bleu_cell} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["run", "ctranslate2"])
    for name in ("float_dir", "int8_dir", "data_dir", "problem", "source", "work", "build",
                 "ct2_dir", "model_dir", "ids", "out", "shortlist", "reference"):
        ap.add_argument("--" + name, default="")
    ap.add_argument("--shortlist_best", type=int, default=0)
    ap.add_argument("--use_vmap", action="store_true")
    ap.add_argument("--split", default="2x1")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--beam_size", type=int, default=4)
    ap.add_argument("--alpha", type=float, default=0.6)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--extra_length", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    (run if args.mode == "run" else ctranslate2_side)(args)


if __name__ == "__main__":
    main()
