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
