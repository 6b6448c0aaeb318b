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


def test_a_problem_in_training_parts_from_python(tmp_path):
    # A YAML problem mixing two parts, generated and read from Python.
    sample = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "data", "sample"))
    usr = tmp_path / "usr"
    usr.mkdir()
    (usr / "py_mix.yaml").write_text(
        "name: py_mix\ntrain:\n"
        f"  - {{name: real, source: {sample}/train.en, target: {sample}/train.zh, shards: 2}}\n"
        f"  - {{name: bt, source: {sample}/dev.en, target: {sample}/dev.zh, weight: 0.5}}\n"
        f"dev: {{source: {sample}/dev.en, target: {sample}/dev.zh}}\n"
        "vocab: {type: byte}\n")
    assert t2t.load_usr_dir(str(usr)) == [str(usr / "py_mix.yaml")]
    data = str(tmp_path / "data")
    t2t.datagen(t2t_usr_dir=str(usr), problem="py_mix", data_dir=data)
    p = t2t.problem("py_mix", data)
    every = p.filepaths("train")
    assert [os.path.basename(f) for f in every] == [
        "py_mix-train-real-00000-of-00002", "py_mix-train-real-00001-of-00002",
        "py_mix-train-bt-00000-of-00010"] + [
        f"py_mix-train-bt-{i:05d}-of-00010" for i in range(1, 10)]
    assert p.filepaths("train-bt") == every[2:]
    assert sum(len(list(t2t.read_examples(f))) for f in every[2:]) == 200
