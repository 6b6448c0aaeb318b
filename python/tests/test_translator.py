"""Translator translates and scores as t2t-decoder does, from several threads."""
import os
import threading

import pytest

import t2t
from conftest import PROBLEM


def translator(run, **kw):
    return t2t.Translator(run.out, data_dir=run.data, problem=PROBLEM, threads=2, **kw)


@pytest.mark.parametrize("quantize", [None, "int8"])
def test_translations_equal_t2t_decoders(run, sources, tmp_path, quantize):
    src = tmp_path / "in.en"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    dst = tmp_path / "out.zh"
    run.decoder(f"--decode_from_file={src}", f"--decode_to_file={dst}",
                "--decode_hparams=beam_size=4,alpha=0.6",
                f"--quantize={quantize or 'none'}")
    expected = dst.read_text(encoding="utf-8").split("\n")[:-1]
    assert sum(1 for t in expected if t) > len(expected) // 2  # a model that says something
    tr = translator(run, quantize=quantize)
    assert tr.translate(sources, beam_size=4, alpha=0.6) == expected
    assert tr.step == 300
    assert tr.checkpoint.endswith("model.ckpt-300.pt")


def test_patience_as_the_decoders(run, sources, tmp_path):
    # patience=2 stops sentences as CTranslate2 does, in t2t-decoder
    # (--decode_hparams) and in both of the Translator's paths alike.
    src = tmp_path / "in.en"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    dst, ours = tmp_path / "out.zh", tmp_path / "ours.zh"
    run.decoder(f"--decode_from_file={src}", f"--decode_to_file={dst}",
                "--decode_hparams=beam_size=4,alpha=0.6,patience=2")
    expected = dst.read_text(encoding="utf-8").split("\n")[:-1]
    assert translator(run).translate(sources, patience=2) == expected
    translator(run, patience=2).translate_file(str(src), str(ours))
    assert ours.read_text(encoding="utf-8").split("\n")[:-1] == expected
    for bad in (-1, float("inf"), float("nan")):
        with pytest.raises(Exception, match="patience"):
            translator(run).translate(sources[:1], patience=bad)


def test_n_best_and_scores(run, sources):
    tr = translator(run)
    best = tr.translate(sources[:5])
    four = tr.translate(sources[:5], n_best=4, return_scores=True)
    for b, hyps in zip(best, four):
        assert 1 <= len(hyps) <= 4
        texts = [t for t, _ in hyps]
        scores = [s for _, s in hyps]
        assert scores == sorted(scores, reverse=True)
        assert all(isinstance(t, str) for t in texts)
    # The best of four equals the single best (the search runs to the end).
    plain = tr.translate(sources[:5], n_best=2)
    assert all(isinstance(h, list) for h in plain)


def test_translate_file_as_the_decoder_with_progress(run, sources, tmp_path):
    src = tmp_path / "in.en"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    ours, theirs = tmp_path / "ours.zh", tmp_path / "theirs.zh"
    run.decoder(f"--decode_from_file={src}", f"--decode_to_file={theirs}")
    seen = []
    translator(run).translate_file(str(src), str(ours), progress=lambda d, n: seen.append((d, n)))
    assert ours.read_text(encoding="utf-8") == theirs.read_text(encoding="utf-8")
    assert seen and seen[-1] == (len(sources), len(sources))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_translate_file_in_pieces_writes_what_one_pass_writes(run, sources, tmp_path):
    src = tmp_path / "in.en"
    # A line with a carriage return and an empty one are records as any other.
    lines = sources[:28] + [sources[28] + "\r", ""]
    src.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    whole, pieces = tmp_path / "whole.zh", tmp_path / "pieces.zh"
    tr = translator(run)
    tr.translate_file(str(src), str(whole))
    seen = []
    tr.translate_file(str(src), str(pieces), piece_lines=7,
                      progress=lambda d, n: seen.append((d, n)))
    assert pieces.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")
    assert not (tmp_path / "pieces.zh.pieces").exists()
    assert seen[-1] == (30, 30) and all(n == 30 for _, n in seen)
    with pytest.raises(ValueError, match="piece_lines=-1"):
        tr.translate_file(str(src), str(pieces), piece_lines=-1)


def test_translate_file_draws_a_progress_bar_when_asked(run, sources, tmp_path, capsys):
    src = tmp_path / "in.en"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    tr = translator(run)
    tr.translate_file(str(src), str(tmp_path / "out.zh"), progress=True)
    err = capsys.readouterr().err
    assert f"{len(sources)}/{len(sources)} sentences" in err and err.endswith("\n")
    tr.translate_file(str(src), str(tmp_path / "quiet.zh"))
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress"):
        tr.translate_file(str(src), str(tmp_path / "x.zh"), progress="yes")


def test_score_equals_score_file(run, sources, references, tmp_path):
    tr = translator(run)
    targets = references[:10]
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{s}\t{t}\n" for s, t in zip(sources[:10], targets)),
                     encoding="utf-8")
    expected = [float(x) for x in run.decoder(f"--score_file={pairs}").split()]
    got = tr.score(sources[:10], targets)
    assert [f"{x:.6f}" for x in got] == [f"{x:.6f}" for x in expected]


def test_eight_threads_give_the_serial_results(run, sources):
    tr = translator(run)
    serial = tr.translate(sources)
    chunks = [sources[i::8] for i in range(8)]
    results = [None] * 8

    def work(i):
        results[i] = tr.translate(chunks[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        assert results[i] == serial[i::8]
    # One sentence a call, from as many threads: they share the queue's batches.
    singles = [None] * len(sources)

    def one(i):
        singles[i] = tr.translate([sources[i]])[0]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(sources))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert singles == serial


def test_errors_are_python_exceptions(run, sources, tmp_path):
    with pytest.raises(t2t.Error, match="no checkpoint|does not exist|not found|no such"):
        t2t.Translator(str(tmp_path / "nothing"), data_dir=run.data, problem=PROBLEM,
                       hparams_set="transformer_tiny")
    with pytest.raises(t2t.Error, match="Did you mean translate_enzh_sample"):
        t2t.Translator(run.out, data_dir=run.data, problem="translate_enzh_sampel")
    with pytest.raises(t2t.Error, match="no_such_hparam"):
        t2t.Translator(run.out, data_dir=run.data, problem=PROBLEM, hparams="no_such_hparam=3")
    with pytest.raises(t2t.Error, match="quantize"):
        t2t.Translator(run.out, data_dir=run.data, problem=PROBLEM, quantize="int4")
    tr = translator(run)
    with pytest.raises(t2t.Error, match="n_best"):
        tr.translate(sources[:2], beam_size=2, n_best=3)
    with pytest.raises(TypeError):
        tr.translate("not a list of sentences, but one string")
    with pytest.raises(TypeError):
        tr.translate([1, 2, 3])
    with pytest.raises(t2t.Error, match="pairs"):
        tr.score(["a", "b"], ["c"])
    with pytest.raises(t2t.Error, match="pair 2 has an empty target"):
        tr.score(["a", "b"], ["c", " "])
    assert issubclass(t2t.Error, RuntimeError)


def test_terms_prefixes_alignments_and_ensembles(run, sources, tmp_path):
    tr = translator(run)
    texts = ["I like music.", "Where is the station?"]
    out = tr.translate(texts, prefix=["", "请问"], constraints=[["音乐"], []],
                       glossary=[("station", "车站")], return_details=True)
    assert "音乐" in out[0]["text"]
    assert out[1]["text"].startswith("请问") and "车站" in out[1]["text"]
    assert out[0]["constraints"] == ["音乐"] and out[0]["constraints_met"] == [True]
    aligned = tr.translate(texts[:1], alignment=True)[0]
    a = aligned["alignment"]
    assert a["source_words"] == ["I", "like", "music", "."]
    assert len(a["soft"]) == len(a["target_words"])
    assert all(0 <= i < 4 and 0 <= j < len(a["target_words"]) for i, j in a["hard"])
    (score, pair), = tr.score(["I like music."], ["我喜欢音乐。"], alignment=True)
    assert score < 0 and pair["hard"]
    with pytest.raises(t2t.Error, match="beam_size"):
        tr.translate(["Hello."], constraints=[["我", "你", "他", "她"]])
    with pytest.raises(t2t.Error, match="prefix"):
        tr.translate(["Hello.", "Hi."], prefix=["我"])
    glossary = tmp_path / "glossary.tsv"
    glossary.write_text("music\t音乐\n", encoding="utf-8")
    assert "音乐" in translator(run, glossary=str(glossary)).translate(["I like music."])[0]
    # A model with itself is the model.
    pair_model = translator(run, ensemble=[run.out], ensemble_weights=[1, 1])
    assert pair_model.translate(sources[:4]) == tr.translate(sources[:4])


def test_shortlist_as_the_decoders(run, sources, tmp_path):
    # A lexical shortlist made by t2t-shortlist narrows the output layer the
    # same way in t2t-decoder and in the Translator.
    shortlist = tmp_path / "shortlist.vmap"
    run.tool("t2t-shortlist", f"--problem={PROBLEM}", f"--data_dir={run.data}",
             f"--output={shortlist}", "--best=5", "--frequent=20")
    src = tmp_path / "in.en"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    dst = tmp_path / "out.zh"
    run.decoder(f"--decode_from_file={src}", f"--decode_to_file={dst}",
                f"--shortlist={shortlist}", "--shortlist_best=3")
    expected = dst.read_text(encoding="utf-8").split("\n")[:-1]
    assert translator(run, shortlist=str(shortlist), shortlist_best=3).translate(sources) == expected
    with pytest.raises(t2t.Error, match="shortlist_best.*goes with.*shortlist"):
        translator(run, shortlist_best=3)
    with pytest.raises(t2t.Error, match="no such file"):
        translator(run, shortlist=str(tmp_path / "missing.vmap"))


def test_a_second_model_trains_and_translates_through_the_same_paths(run, sources, tmp_path):
    # The Evolved Transformer goes through the trainer, the decoder and the
    # Translator as the Transformer does: only the model's name differs.
    out = str(tmp_path / "evolved")
    t2t.train(problem=PROBLEM, model="evolved_transformer", hparams_set="evolved_transformer_tiny",
              hparams={"hidden_size": 32, "num_heads": 2, "batch_size": 512,
                       "learning_rate_warmup_steps": 10}, data_dir=run.data,
              output_dir=out, train_steps=40, schedule="train", threads=2)
    src, dst = tmp_path / "in.en", tmp_path / "out.zh"
    src.write_text("\n".join(sources[:10]) + "\n", encoding="utf-8")
    run.tool("t2t-decoder", f"--problem={PROBLEM}", "--model=evolved_transformer",
             f"--data_dir={run.data}", f"--output_dir={out}", "--threads=2",
             f"--decode_from_file={src}", f"--decode_to_file={dst}",
             "--decode_hparams=beam_size=4,alpha=0.6")
    expected = dst.read_text(encoding="utf-8").split("\n")[:-1]
    tr = t2t.Translator(out, model="evolved_transformer", data_dir=run.data, problem=PROBLEM,
                        threads=2)
    assert tr.translate(sources[:10], beam_size=4, alpha=0.6) == expected
    assert tr.step == 40
    with pytest.raises(Exception, match="int8"):
        t2t.Translator(out, model="evolved_transformer", data_dir=run.data, problem=PROBLEM,
                       quantize="int8")
