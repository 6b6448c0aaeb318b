"""The model's weights as torch tensors: shared with the Translator, and written
back as a t2t checkpoint that the tools load."""
import shutil

import pytest
import torch

import t2t
from conftest import PROBLEM


def test_state_dict_shares_the_models_memory_and_round_trips(run, sources, tmp_path):
    tr = t2t.Translator(run.out, data_dir=run.data, problem=PROBLEM, threads=2)
    before = tr.translate(sources[:10])
    weights = tr.state_dict()
    assert weights and all(isinstance(t, torch.Tensor) for t in weights.values())
    name = next(n for n in weights if "embedding" in n or "emb" in n)
    original = {n: t.clone() for n, t in weights.items()}
    # An edit in place is an edit of the model the Translator decodes with.
    with torch.no_grad():
        for t in weights.values():
            if t.is_floating_point() and t.dim() == 2:
                t.mul_(0.5)
    halved = tr.translate(sources[:10])
    assert halved != before
    assert torch.equal(tr.state_dict()[name], weights[name])

    # Written as a checkpoint of a new run directory, loaded by a Translator
    # and by t2t-decoder alike, it translates as the edited model does.
    edited = tmp_path / "edited"
    path = t2t.load_state_dict(str(edited), weights, like=run.out)
    assert path.endswith("model.ckpt-301.pt")
    again = t2t.Translator(str(edited), data_dir=run.data, problem=PROBLEM, threads=2)
    assert again.translate(sources[:10]) == halved
    for n, t in again.state_dict().items():
        assert torch.equal(t, weights[n])

    # The original weights, back into (a copy of) the run at a step of our choosing.
    copy = tmp_path / "copy"
    shutil.copytree(run.out, copy)
    path = t2t.load_state_dict(str(copy), original, step=1000)
    assert path.endswith("model.ckpt-1000.pt")
    restored = t2t.Translator(str(copy), data_dir=run.data, problem=PROBLEM, threads=2)
    assert restored.step == 1000
    assert restored.translate(sources[:10]) == before


def test_load_state_dict_names_what_does_not_fit(run, tmp_path):
    tr = t2t.Translator(run.out, data_dir=run.data, problem=PROBLEM, threads=2)
    weights = dict(tr.state_dict())
    first = sorted(weights)[0]
    del weights[first]
    weights["no.such.weight"] = torch.zeros(3)
    with pytest.raises(t2t.Error, match=f"missing {first}.*unexpected no.such.weight"):
        t2t.load_state_dict(str(tmp_path / "x"), weights, like=run.out)
    with pytest.raises(t2t.Error, match="no checkpoint"):
        t2t.load_state_dict(str(tmp_path / "empty"), weights)
