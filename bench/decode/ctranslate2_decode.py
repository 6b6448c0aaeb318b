"""The CTranslate2 peer of the decoding benchmark: a t2t run exported by
tools/export_ctranslate2.py, decoding the sources t2t-bench-decode exported
(sources.json: ids, EOS last), batched by CTranslate2 with max_batch_size
(it sorts by length, as t2t does), at a given inter_threads x intra_threads
split. Prints one JSON line like t2t-bench-decode's.

--search=t2t makes CTranslate2 do T2T's search as far as its options allow,
so that both engines do the same work: beam search with patience 2 (it
stops a sentence once 2 x beam hypotheses finished), every finished one
returned with its plain log-probability (length_penalty 0), and the best
re-ranked with T2T's penalty log p / ((5 + length) / 6)^alpha, length
counting EOS. --search=own keeps CTranslate2's defaults (length penalty
log p / length^1, patience 1): its speed at its best, not the same output.

  ctranslate2_decode.py --model_dir=CT2 --sources=EXPORT/sources.json
                        --beam_size=4 --batch_size=32 --inter_threads=2 --intra_threads=1
"""
import argparse
import json
import os
import resource
import time


def t2t_search_options(beam_size):
    """translate_batch options for T2T's search as far as CTranslate2 allows:
    patience 2, every finished hypothesis with its plain log-probability."""
    if beam_size <= 1:
        return {}
    return dict(patience=2, length_penalty=0.0, num_hypotheses=2 * beam_size,
                return_scores=True)


def translate_options(beam_size, batch_size, longest_source, extra_length, t2t_search=True):
    """translate_batch options of the benchmarks. t2t limits each sentence to
    its source (EOS included) + extra_length; CTranslate2 limits a call, so
    the longest source's limit is used. T2T's search adds t2t_search_options."""
    options = dict(beam_size=beam_size, max_batch_size=batch_size, min_decoding_length=0,
                   max_decoding_length=longest_source + extra_length)
    if t2t_search:
        options.update(t2t_search_options(beam_size))
    return options


def t2t_best_ids(result, alpha, t2t_search=True):
    """The best hypothesis's ids, re-ranked with T2T's length penalty
    log p / ((5 + length) / 6)^alpha (length counting EOS) for T2T's search."""
    hyps = list(zip(result.hypotheses, result.scores)) if result.scores else \
        [(result.hypotheses[0], 0.0)]
    if t2t_search:
        hyps.sort(key=lambda h: -h[1] / ((5.0 + len(h[0]) + 1) / 6.0) ** alpha)
    return [int(t[len("<id_"):-1]) for t in hyps[0][0]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", required=True)
    ap.add_argument("--sources", required=True)
    ap.add_argument("--beam_size", type=int, default=4)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--alpha", type=float, default=0.6)
    ap.add_argument("--extra_length", type=int, default=100)
    ap.add_argument("--inter_threads", type=int, default=1)
    ap.add_argument("--intra_threads", type=int, default=0)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--search", choices=["t2t", "own"], default="t2t")
    ap.add_argument("--write_ids", default="")
    args = ap.parse_args()
    import ctranslate2

    with open(args.sources) as f:
        sources = json.load(f)
    # The exported model appends EOS itself.
    tokens = [["<id_%d>" % i for i in ids[:-1]] for ids in sources]
    translator = ctranslate2.Translator(args.model_dir, device="cpu",
                                        inter_threads=args.inter_threads,
                                        intra_threads=args.intra_threads)
    # t2t's limit is per sentence (source length with EOS + extra_length);
    # CTranslate2's is per call, so the longest sentence's is used.
    t2t_search = args.search == "t2t" and args.beam_size > 1
    options = translate_options(args.beam_size, args.batch_size, max(len(s) for s in sources),
                                args.extra_length, t2t_search)

    def best_ids(result):
        return t2t_best_ids(result, args.alpha, t2t_search)

    warm_start = time.time()
    results = translator.translate_batch(tokens, **options)
    warmup_s = time.time() - warm_start
    cpu0 = time.process_time()
    start = time.time()
    for _ in range(args.passes):
        results = translator.translate_batch(tokens, **options)
    seconds = (time.time() - start) / args.passes
    cpu = (time.process_time() - cpu0) / args.passes
    ids = [best_ids(r) for r in results]
    if args.write_ids:
        with open(args.write_ids, "w") as f:
            for row in ids:
                f.write(" ".join(map(str, row)) + "\n")
    output_tokens = sum(len(r) + 1 for r in ids)
    print(json.dumps(dict(
        side="ctranslate2", model=os.path.basename(os.path.normpath(args.model_dir)),
        search=args.search, beam_size=args.beam_size, batch_size=args.batch_size,
        inter_threads=args.inter_threads, intra_threads=args.intra_threads,
        sentences=len(sources), output_tokens=output_tokens, passes=args.passes,
        warmup_s=warmup_s, seconds=seconds, cpu_seconds=cpu,
        sentences_per_s=len(sources) / seconds, output_tokens_per_s=output_tokens / seconds,
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        ctranslate2=ctranslate2.__version__,
        omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""))))


if __name__ == "__main__":
    main()
