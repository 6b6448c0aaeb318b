# Type stubs of the t2t package (the native part is t2t._t2t).
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import torch

__version__: str

class Error(RuntimeError):
    """A failure of the library, with its message (a missing checkpoint, an
    unknown problem, a bad hparam, ...)."""

class BleuScore:
    score: float
    precisions: List[float]
    bp: float
    ratio: float
    sys_len: int
    ref_len: int
    counts: List[int]
    totals: List[int]
    signature: str

class Translator:
    """A trained run, loaded once, that translates and scores as t2t-decoder does."""
    step: int
    checkpoint: str
    device: str
    def __init__(self, output_dir: str, *, data_dir: str, problem: str,
                 model: str = "transformer", hparams_set: str = "", hparams: str = "",
                 device: str = "cpu", quantize: Optional[str] = None, threads: int = 0,
                 checkpoint: Optional[str] = None, batch_size: int = 32, beam_size: int = 4,
                 alpha: float = 0.6, max_input_size: int = 1024,
                 patience: float = 0.0, glossary: Optional[str] = None,
                 ensemble: Optional[Sequence[str]] = None,
                 ensemble_weights: Optional[Sequence[float]] = None,
                 alignment_layer: Optional[int] = None, alignment_head: Optional[int] = None,
                 batch_tokens: int = 0) -> None: ...
    def translate(self, texts: Sequence[str], *, beam_size: int = 4, alpha: float = 0.6,
                  n_best: int = 1, return_scores: bool = False,
                  max_batch_size: Optional[int] = None, patience: float = 0.0,
                  prefix: Optional[Sequence[str]] = None,
                  constraints: Optional[Sequence[Sequence[str]]] = None,
                  glossary: Optional[Sequence[Tuple[str, str]]] = None,
                  no_repeat_ngram_size: int = 0, repetition_penalty: float = 1.0,
                  alignment: bool = False, alignment_threshold: float = 1.0,
                  return_details: bool = False
                  ) -> Union[List[str], List[List[str]], List[List[Tuple[str, float]]],
                             List[Dict[str, Any]], List[List[Dict[str, Any]]]]: ...
    def translate_file(self, source: str, target: str, *,
                       progress: Union[bool, Callable[[int, int], None], None] = False,
                       piece_lines: int = 0) -> None: ...
    def score(self, sources: Sequence[str], targets: Sequence[str], *,
              alignment: bool = False) -> Union[List[float], List[Tuple[float, Dict[str, Any]]]]: ...
    def state_dict(self) -> Dict[str, torch.Tensor]: ...

class Problem:
    """A registered problem with its vocabularies, loaded from data_dir."""
    name: str
    shared_vocabulary: bool
    def __init__(self, name: str, data_dir: str) -> None: ...
    def encode(self, text: str, side: str = "inputs", eos: bool = True) -> List[int]: ...
    def decode(self, ids: Sequence[int], side: str = "targets") -> str: ...
    def vocab_size(self, side: str = "inputs") -> int: ...
    def filepaths(self, split: str = "train") -> List[str]: ...

class _Registry:
    problems: List[str]
    models: List[str]
    hparams_sets: List[str]

registry: _Registry

def problem(name: str, data_dir: str) -> Problem: ...
def read_examples(path: str) -> Iterator[Dict[str, List[int]]]: ...
def hparams(set_name: str, overrides: Union[str, Mapping[str, object]] = "",
            file: Optional[str] = None) -> Dict[str, object]: ...
def alignment_words(text: str) -> List[str]: ...
def bleu(hypotheses: Sequence[str], references: Sequence[str], *,
         tokenize: Optional[str] = None, lowercase: bool = False) -> BleuScore: ...
def load_state_dict(output_dir: str, tensors: Mapping[str, torch.Tensor], *,
                    step: Optional[int] = None, like: Optional[str] = None) -> str: ...
def load_usr_dir(dir: str) -> List[str]: ...
def set_log_level(level: str) -> None: ...
def train(**flags: object) -> None: ...
def datagen(**flags: object) -> None: ...
