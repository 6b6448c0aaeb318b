#!/usr/bin/env python3
"""Expected BLEU values for tests/metrics/test_sacrebleu.cc, from the real scorers.

  bleu_cases.py sacrebleu   # a Python with sacrebleu 2.x (pip install sacrebleu)
  bleu_cases.py t2t         # a Python with tensor2tensor (see bench/datagen/t2t_reference.py:
                            # PYTHONPATH=$T2T_CACHE/bench-t2t-shim $T2T_CACHE/bench-t2t-venv/bin/python)

Each prints C++ initializers to paste into the test; the cases themselves are
emitted too (`cases`), so the test and this file cannot drift apart silently.
"""
import sys

CASES = [
    ("english", [
        'The cat sat on the mat.',
        'He paid $1,000.50 for 3.5kg of "fresh" fish -- in 2019.',
        "It's a well-known fact: 10-20% of e-mails aren't read!",
        'Visit www.example.com/path?q=1&x=2 (or not).',
        'The &quot;quoted&quot; text &amp;lt;b&amp;gt; <skipped> stays.',
    ], [
        'The cat sat on a mat.',
        'He paid $1,000.50 for 3.5 kg of "fresh" fish - in 2019.',
        "It is a well-known fact: 10-20% of e-mails are not read!",
        'Visit www.example.com/path?q=1&x=2 (or do not).',
        'The "quoted" text <b> stays.',
    ]),
    ("unicode", [
        '¿Qué tal? «Très bien», dit-il — 3,14 € ou ½ litre…',
        'Straße № 5: 1.000,5 km² ± 2 ‰ → fine; “ok”?',
        'ΟΔΟΣ ΣΙΣΥΦΟΥ και İstanbul’da ΑΣ ΣΑ',
        'नमस्ते। यह 2,5 है॥ (test) ©2024 ™',
        'a+b=c & 3×4=12 ~ ok <tag> #1 @home',
    ], [
        '¿Qué tal? « Très bien », dit-il - 3,14 € ou ½ litre ...',
        'Straße Nr. 5: 1.000,5 km² ± 2 ‰ → fine; "ok"?',
        'οδος σισυφου και istanbul’da ας σα',
        'नमस्ते। यह 2,5 है॥ (test) © 2024 ™',
        'a + b = c & 3×4 = 12 ~ ok <tag> #1 @home',
    ]),
    ("chinese", [
        '我们在2017年发布了iPhone X，价格是999.99美元。',
        '“你好，世界！”他说—然后离开了…',
        '天气很好，温度是25.5°C，湿度80%。',
        '这是一个测试，a test, with English words.',
        '𠀀𠀁 (Extension B) stay whole, ㈠ and ㎏ split off.',
    ], [
        '我们在2017年发布了iPhone X，售价999.99美元。',
        '"你好，世界！"他说，然后走了...',
        '今天天气很好，温度为25.5°C，湿度80%。',
        '这是一个测试, a test, with English words.',
        '𠀀𠀁 (Extension B) stay whole, ㈠ and ㎏ split off.',
    ]),
    ("whitespace", [
        'tab\tseparated  words\u3000and ideographic\u00a0spaces  ',
        '',
        'only hypothesis',
        '  leading and trailing\u2003',
    ], [
        'tab separated words and ideographic spaces',
        'only reference',
        '',
        'leading and trailing',
    ]),
    ("no_match", [
        'completely different words here',
        'nothing',
    ], [
        'totally unrelated reference sentence',
        'zilch',
    ]),
    ("short", [
        'a b',
    ], [
        'a b c d e f',
    ]),
    ("unigrams_only", [
        'x a y b z c',
        'q d',
    ], [
        'a b c d',
        'e f g h',
    ]),
]

TOKENIZERS = ["13a", "intl", "zh", "none"]


def cxx_string(s):
    out = []
    for ch in s:
        cp = ord(ch)
        if ch in '"\\':
            out.append('\\' + ch)
        elif ch == '\t':
            out.append('\\t')
        elif cp < 0x20 or (ch.isspace() and cp > 0x7f):
            # Invisible characters are spelled out so the test stays readable.
            out.append('\\u%04x' % cp if cp < 0x10000 else '\\U%08x' % cp)
        else:
            out.append(ch)
    return '"' + ''.join(out) + '"'


def cxx_list(items):
    return "{" + ", ".join(str(x) for x in items) + "}"


def print_cases():
    print("const BleuCase kCases[] = {")
    for name, hyps, refs in CASES:
        print(f'    {{"{name}",')
        print("     {" + ",\n      ".join(cxx_string(h) for h in hyps) + "},")
        print("     {" + ",\n      ".join(cxx_string(r) for r in refs) + "}},")
    print("};")


def print_sacrebleu():
    import sacrebleu
    from sacrebleu.metrics import BLEU
    print(f"// sacrebleu {sacrebleu.__version__}")
    print("const SacreBleuExpected kSacreBleu[] = {")
    for name, hyps, refs in CASES:
        for tok in TOKENIZERS:
            for lc in (False, True):
                bleu = BLEU(tokenize=tok, lowercase=lc)
                s = bleu.corpus_score(hyps, [refs])
                print(f'    {{"{name}", "{tok}", {str(lc).lower()}, {s.score!r}, '
                      f'{cxx_list(s.counts)}, {cxx_list(s.totals)}, {s.sys_len}, {s.ref_len},\n'
                      f'     "{s.format()}"}},')
    print("};")
    print("const TokenizedExpected kTokenized[] = {")
    cases = dict((name, hyps) for name, hyps, _ in CASES)
    lines = cases["english"][:3] + cases["unicode"] + cases["chinese"] + cases["whitespace"][:1]
    for line in lines:
        outs = [BLEU(tokenize=tok).tokenizer(line.rstrip()) for tok in TOKENIZERS]
        print(f"    {{{cxx_string(line)},\n     {{" + ",\n      ".join(cxx_string(o) for o in outs) + "}},")
    print("};")


def print_t2t():
    from tensor2tensor.utils import bleu_hook
    print("const T2TExpected kT2T[] = {")
    for name, hyps, refs in CASES:
        for cased in (True, False):
            # bleu_wrapper's steps, on lists instead of files.
            h = hyps if cased else [x.lower() for x in hyps]
            r = refs if cased else [x.lower() for x in refs]
            bleu = 100 * bleu_hook.compute_bleu([bleu_hook.bleu_tokenize(x) for x in r],
                                                [bleu_hook.bleu_tokenize(x) for x in h])
            print(f'    {{"{name}", {str(cased).lower()}, {float(bleu)!r}, "{"%6.2f" % bleu}"}},')
    print("};")
    print("const T2TTokenized kT2TTokenized[] = {")
    for name, hyps, refs in CASES[:4]:
        for line in hyps[:3]:
            toks = bleu_hook.bleu_tokenize(line)
            print(f'    {{{cxx_string(line)}, {{{", ".join(cxx_string(t) for t in toks)}}}}},')
    print("};")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "cases":
        print_cases()
    elif mode == "sacrebleu":
        print_sacrebleu()
    elif mode == "t2t":
        print_t2t()
    else:
        sys.exit("usage: bleu_cases.py cases|sacrebleu|t2t")
