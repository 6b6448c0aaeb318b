"""Problems, shards, the registry and hparams from Python."""
import glob
import os

import pytest

import t2t
from conftest import PROBLEM


def test_encode_gives_the_datagens_ids(run):
    p = t2t.problem(PROBLEM, run.data)
    shards = p.filepaths("dev")
    assert shards and all(os.path.exists(s) for s in shards)
    examples = list(t2t.read_examples(shards[0]))
    assert examples and set(examples[0]) >= {"inputs", "targets"}
    for ex in examples[:20]:
        for side in ("inputs", "targets"):
            text = p.decode(ex[side], side)
            assert p.encode(text, side) == ex[side]
            assert ex[side][-1] == 1
    assert p.encode("hello", "inputs", eos=False) == p.encode("hello", "inputs")[:-1]
    assert p.vocab_size("inputs") > 100
    assert p.name == PROBLEM
    with pytest.raises(t2t.Error, match="side"):
        p.encode("hello", "sources")


def test_read_examples_reads_every_record_and_refuses_junk(run, tmp_path):
    shards = sorted(glob.glob(os.path.join(run.data, f"{PROBLEM}-train-*")))
    assert shards
    count = sum(1 for _ in t2t.read_examples(shards[0]))
    assert count > 0
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(open(shards[0], "rb").read()[:100])
    with pytest.raises(t2t.Error, match="bad.tfrecord"):
        list(t2t.read_examples(str(bad)))
    with pytest.raises(t2t.Error, match="missing"):
        t2t.read_examples(str(tmp_path / "missing"))


def test_registry_and_hparams():
    assert PROBLEM in t2t.registry.problems
    assert "transformer" in t2t.registry.models
    assert "transformer_base" in t2t.registry.hparams_sets
    hp = t2t.hparams("transformer_base", {"hidden_size": 256, "num_hidden_layers": 3})
    assert hp["hidden_size"] == 256 and hp["num_hidden_layers"] == 3 and hp["num_heads"] == 8
    assert t2t.hparams("transformer_tiny", "num_heads=2")["num_heads"] == 2
    with pytest.raises(t2t.Error, match="Did you mean"):
        t2t.hparams("transformer_bsae")
    with pytest.raises(t2t.Error, match="hidden_size"):
        t2t.hparams("transformer_base", "hidden_size=wide")


def test_alignment_words_and_aligned_shards(tmp_path):
    # The words Pharaoh indices count, as the C++ side counts them.
    assert t2t.alignment_words("Hello, world! iPhone 15手机。") == [
        "Hello", ",", "world", "!", "iPhone", "15", "手", "机", "。"]
    assert t2t.alignment_words("  ") == []
    # datagen(train_alignments=...) writes them into the training shards.
    sample = os.path.join(os.path.dirname(__file__), "..", "..", "data", "sample")
    with open(os.path.join(sample, "train.en"), encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    align = tmp_path / "train.align"
    align.write_text("0-0\n" * lines)
    data = tmp_path / "data"
    t2t.datagen(problem=PROBLEM, data_dir=str(data), train_alignments=str(align))
    shards = t2t.problem(PROBLEM, str(data)).filepaths("train")
    example = next(iter(t2t.read_examples(shards[0])))
    assert "alignment" in example and len(example["alignment"]) % 2 == 0
    align.write_text("0-0\n" * (lines - 1))
    with pytest.raises(t2t.Error, match="train.align"):
        t2t.datagen(problem=PROBLEM, data_dir=str(tmp_path / "short"), train_alignments=str(align))
