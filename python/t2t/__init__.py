"""t2t from Python: the same C++ library as t2t's tools, with torch tensors in and out.

    import t2t
    tr = t2t.Translator("run", data_dir="data", problem="translate_enzh_sample")
    tr.translate(["Hello world."], beam_size=4)          # what t2t-decoder writes
    t2t.bleu(hypotheses, [refs_a, refs_b]).score         # sacreBLEU's score (chrf, ter too)
    t2t.train(problem=..., model="transformer", hparams_set=..., data_dir=..., output_dir=...)

Everything runs in the library (no second implementation): Translator, Problem,
read_examples, bleu/chrf/ter, hparams and the state dicts in this process, train and
datagen as the t2t-trainer and t2t-datagen binaries. Log lines go to the
logging module (logger "t2t"); errors are t2t.Error with the library's message.
"""
import logging as _logging

import torch as _torch  # loads LibTorch, which the native module links against

from . import _build


def _check_torch() -> None:
    built, have = _build.TORCH_VERSION, _torch.__version__
    if built != have:
        raise ImportError(
            f"t2t was built against torch {built}, but this Python imports torch {have}: "
            f"rebuild t2t with this torch (pip install ./python from t2t's checkout) "
            f"or install torch=={built}")


_check_torch()

from . import _t2t  # noqa: E402
from ._t2t import (  # noqa: E402,F401
    BleuScore,
    ChrfScore,
    Error,
    Problem,
    Translator,
    alignment_words,
    bleu,
    chrf,
    load_state_dict,
    load_usr_dir,
    sentence_bleu,
    sentence_chrf,
    sentence_ter,
    set_log_level,
    ter,
    TerScore,
)
from ._tools import datagen, train  # noqa: E402,F401
from ._tools import overrides_text as _overrides_text  # noqa: E402

__version__ = _t2t.__version__

_t2t._install_logging()
_logging.getLogger("t2t").addHandler(_logging.NullHandler())


def problem(name: str, data_dir: str) -> Problem:
    """A registered problem with its vocabularies, loaded from data_dir."""
    return Problem(name, data_dir)


def read_examples(path: str):
    """The tf.train.Example records of a TFRecord shard, each a dict of int lists
    ({"inputs": [...], "targets": [...]}), as TensorFlow reads the same file."""
    return _t2t.ExampleReader(path)


def hparams(set_name: str, overrides="", file=None) -> dict:
    """A registered hparams set as a dict, with a YAML file and then overrides
    (a "key=value,..." string or a dict) applied, as --hparams_set,
    --hparams_file and --hparams do."""
    return _t2t.hparams(set_name, _overrides_text(overrides), file)


class _Registry:
    """What is registered: problems, models and hparams sets (plugins loaded
    with load_usr_dir included)."""

    @property
    def problems(self):
        return _t2t.problems()

    @property
    def models(self):
        return _t2t.models()

    @property
    def hparams_sets(self):
        return _t2t.hparams_sets()

    def __repr__(self):
        return (f"<t2t registry: {len(self.problems)} problems, {len(self.models)} models, "
                f"{len(self.hparams_sets)} hparams sets>")


registry = _Registry()
