"""Greedy translation of t2t source ids by a model tools/export_ctranslate2.py
wrote, printed as ids: the side of tests/tools/test_export_ctranslate2.cc that
CTranslate2 decodes.

  ctranslate2_translate.py MODEL_DIR SOURCES_JSON EXTRA_LENGTH OUT_IDS

SOURCES_JSON is the sources.json of t2t-bench-decode --export_dir: t2t
source ids per sentence, EOS last. OUT_IDS gets one line per sentence, the
translation's ids without EOS, as t2t-bench-decode --write_ids writes them.

All sentences go through CTranslate2 in one batch (so that padded sources
are exercised) with a max_decoding_length that no sentence's t2t limit
exceeds; each is then cut to its own limit, source length (EOS included) +
EXTRA_LENGTH ids, t2t's (t2t/search/beam_search.cc). Greedy decoding of a
row does not depend on the others, so that equals a run with the limit
per sentence.
"""
import json
import sys

EOS = 1


def main():
    model_dir, sources_path, extra_length, out_path = sys.argv[1:5]
    extra_length = int(extra_length)
    import ctranslate2

    with open(sources_path) as f:
        sources = json.load(f)
    tokens = []
    for ids in sources:
        if not ids or ids[-1] != EOS:
            sys.exit("%s: a source does not end with EOS: %s" % (sources_path, ids))
        # The exported model appends EOS itself (add_source_eos).
        tokens.append(["<id_%d>" % i for i in ids[:-1]])
    limits = [max(1, len(ids) + extra_length) for ids in sources]
    translator = ctranslate2.Translator(model_dir, device="cpu", inter_threads=1)
    results = translator.translate_batch(tokens, beam_size=1, max_batch_size=len(tokens),
                                         max_input_length=0, min_decoding_length=0,
                                         max_decoding_length=max(limits) + 1)
    with open(out_path, "w") as out:
        for result, limit in zip(results, limits):
            ids = [int(t[len("<id_"):-1]) for t in result.hypotheses[0]]
            out.write(" ".join(map(str, ids[:limit])) + "\n")


if __name__ == "__main__":
    main()
