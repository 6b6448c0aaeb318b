"""t2t.bleu gives sacreBLEU's score, statistics and tokenization."""
import pytest
import sacrebleu

import t2t

HYPS = ["The cat sat on the mat.", "A quick brown fox jumps.", "Hello there, world!",
        "Nothing matches here at all", ""]
REFS = ["The cat is sitting on the mat.", "The quick brown fox jumped.", "Hello, world!",
        "Something else entirely", "Empty hypothesis"]
ZH_HYPS = ["我们今天去公园。", "他喜欢读书和写字。", "这是一个测试"]
ZH_REFS = ["我们今天去了公园。", "他喜欢读书。", "这是测试"]


@pytest.mark.parametrize("hyps,refs,tokenize", [
    (HYPS, REFS, None), (HYPS, REFS, "intl"), (HYPS, REFS, "none"), (ZH_HYPS, ZH_REFS, None)])
def test_bleu_equals_sacrebleus(hyps, refs, tokenize):
    ours = t2t.bleu(hyps, refs, tokenize=tokenize)
    kwargs = {} if tokenize is None else {"tokenize": tokenize}
    if tokenize is None and refs is ZH_REFS:
        kwargs = {"tokenize": "zh"}
    theirs = sacrebleu.corpus_bleu(hyps, [refs], **kwargs)
    assert round(ours.score, 10) == round(theirs.score, 10)
    assert list(ours.counts) == list(theirs.counts)
    assert list(ours.totals) == list(theirs.totals)
    assert ours.sys_len == theirs.sys_len and ours.ref_len == theirs.ref_len
    assert f"{ours.bp:.3f}" == f"{theirs.bp:.3f}"
    expected_tok = kwargs.get("tokenize", "13a")
    assert f"tok:{expected_tok}" in ours.signature
    assert str(ours).startswith("BLEU = ")


def test_bleu_errors():
    with pytest.raises(t2t.Error):
        t2t.bleu(["a"], ["a", "b"])
    with pytest.raises(t2t.Error, match="tokeni"):
        t2t.bleu(["a"], ["a"], tokenize="klingon")


REFS_B = ["A cat sat on the mat.", "The fast brown fox jumps.", "Hello world!",
          "Nothing matches", "An empty hypothesis"]


def test_bleu_takes_sacrebleus_reference_streams():
    # sacrebleu.corpus_bleu(hyps, [refs]) and [refs_a, refs_b]: the same call.
    one = t2t.bleu(HYPS, [REFS])
    assert one.score == t2t.bleu(HYPS, REFS).score
    ours = t2t.bleu(HYPS, [REFS, REFS_B])
    theirs = sacrebleu.corpus_bleu(HYPS, [REFS, REFS_B])
    assert round(ours.score, 10) == round(theirs.score, 10)
    assert list(ours.counts) == list(theirs.counts)
    assert ours.ref_len == theirs.ref_len
    assert ours.signature.startswith("nrefs:2|")
    # None where a stream has no reference: sacreBLEU's variable references.
    gappy = [REFS, REFS_B[:-1] + [None]]
    assert round(t2t.bleu(HYPS, gappy).score, 10) == round(
        sacrebleu.corpus_bleu(HYPS, gappy).score, 10)
    assert t2t.bleu(HYPS, gappy).signature.startswith("nrefs:var|")


@pytest.mark.parametrize("kwargs", [{}, {"word_order": 2}, {"beta": 1, "lowercase": True},
                                    {"char_order": 4, "whitespace": True, "eps_smoothing": True}])
def test_chrf_equals_sacrebleus(kwargs):
    from sacrebleu.metrics import CHRF
    ours = t2t.chrf(HYPS, [REFS, REFS_B], **kwargs)
    metric = CHRF(**kwargs)
    theirs = metric.corpus_score(HYPS, [REFS, REFS_B])
    assert round(ours.score, 10) == round(theirs.score, 10)
    assert ours.name == theirs.name
    assert ours.signature.rsplit("|version:", 1)[0] == \
        metric.get_signature().format().rsplit("|version:", 1)[0]
    assert str(ours) == f"{theirs.name} = {theirs.score:.2f}"


@pytest.mark.parametrize("kwargs", [{}, {"case_sensitive": True}, {"normalized": True},
                                    {"no_punct": True, "asian_support": True}])
def test_ter_equals_sacrebleus(kwargs):
    from sacrebleu.metrics import TER
    ours = t2t.ter(HYPS + ZH_HYPS, [REFS + ZH_REFS, REFS_B + ZH_REFS], **kwargs)
    metric = TER(**kwargs)
    theirs = metric.corpus_score(HYPS + ZH_HYPS, [REFS + ZH_REFS, REFS_B + ZH_REFS])
    assert round(ours.score, 10) == round(theirs.score, 10)
    assert ours.num_edits == theirs.num_edits and ours.ref_length == theirs.ref_length
    assert ours.signature.rsplit("|version:", 1)[0] == \
        metric.get_signature().format().rsplit("|version:", 1)[0]


def test_sentence_scores_equal_sacrebleus():
    for hyp, ref_a, ref_b in zip(HYPS, REFS, REFS_B):
        assert round(t2t.sentence_bleu(hyp, [ref_a, ref_b]).score, 10) == round(
            sacrebleu.sentence_bleu(hyp, [ref_a, ref_b]).score, 10)
        assert round(t2t.sentence_chrf(hyp, [ref_a]).score, 10) == round(
            sacrebleu.sentence_chrf(hyp, [ref_a]).score, 10)
        assert round(t2t.sentence_ter(hyp, [ref_a, ref_b]).score, 10) == round(
            sacrebleu.sentence_ter(hyp, [ref_a, ref_b]).score, 10)


def test_reference_errors_name_the_fault():
    with pytest.raises(TypeError, match="list of reference streams"):
        t2t.bleu(HYPS, "one string")
    with pytest.raises(TypeError, match=r"references\[1\]\[0\]"):
        t2t.chrf(["a"], [["a"], [3]])
    with pytest.raises(t2t.Error, match="reference 2 has 1 lines"):
        t2t.ter(["a", "b"], [["a", "b"], ["a"]])
    with pytest.raises(t2t.Error, match="smoothing"):
        t2t.bleu(["a"], ["a"], smooth_method="magic")
