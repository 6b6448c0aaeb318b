"""T2T problem `translate_enzh_shared_fixture`: t2t's bundled sample with one
SubwordTextEncoder of ~2**9 subwords shared by English and Chinese, as T2T's
WMT problems into European languages share theirs
(vocab.translate_enzh_shared_fixture.512.subwords). With a shared vocabulary
T2T keeps one embedding for inputs, targets and softmax when the hparams
share them (symbol_modality_<V>_<H>/shared/weights_*). The raw files are
read from --tmp_dir (train.en, train.zh, dev.en, dev.zh); nothing is
downloaded.
"""
from tensor2tensor.data_generators import problem
from tensor2tensor.data_generators import translate
from tensor2tensor.utils import registry


@registry.register_problem
class TranslateEnzhSharedFixture(translate.TranslateProblem):

  @property
  def approx_vocab_size(self):
    return 2**9

  @property
  def dataset_splits(self):
    return [{"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1}]

  def source_data_files(self, dataset_split):
    # "url" is the en file's own name: not http, so nothing is downloaded.
    if dataset_split == problem.DatasetSplit.TRAIN:
      return [["train.en", ("train.en", "train.zh")]]
    return [["dev.en", ("dev.en", "dev.zh")]]
