"""T2T problem `translate_enzh_fixture`: t2t's bundled sample (data/sample).

T2T's translate_enzh_wmt8k with vocabularies of ~2**8 subwords instead of
~2**13, so that a checkpoint of a small model stays a small test fixture.
Separate en / zh SubwordTextEncoders, built from train.en / train.zh: their
sizes differ, as on every en-zh problem, which is where T2T unties the
softmax from the target embedding. The raw files are read from --tmp_dir
(train.en, train.zh, dev.en, dev.zh); nothing is downloaded.
"""
from tensor2tensor.data_generators import generator_utils
from tensor2tensor.data_generators import problem
from tensor2tensor.data_generators import text_problems
from tensor2tensor.data_generators import translate
from tensor2tensor.data_generators import translate_enzh
from tensor2tensor.utils import registry


@registry.register_problem
class TranslateEnzhFixture(translate_enzh.TranslateEnzhWmt8k):

  @property
  def approx_vocab_size(self):
    return 2**8

  def source_data_files(self, dataset_split):
    # "url" is the en file's own name: not http, so nothing is downloaded.
    if dataset_split == problem.DatasetSplit.TRAIN:
      return [["train.en", ("train.en", "train.zh")]]
    return [["dev.en", ("dev.en", "dev.zh")]]

  def get_training_dataset(self, tmp_dir):
    return self.source_data_files(problem.DatasetSplit.TRAIN)

  def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
    train_files = self.source_data_files(problem.DatasetSplit.TRAIN)
    source_vocab = generator_utils.get_or_generate_vocab(
        data_dir, tmp_dir, self.source_vocab_name, self.approx_vocab_size,
        [[url, [files[0]]] for url, files in train_files],
        file_byte_budget=1e8, max_subtoken_length=self.max_subtoken_length)
    target_vocab = generator_utils.get_or_generate_vocab(
        data_dir, tmp_dir, self.target_vocab_name, self.approx_vocab_size,
        [[url, [files[1]]] for url, files in train_files],
        file_byte_budget=1e8, max_subtoken_length=self.max_subtoken_length)
    tag = "train" if dataset_split == problem.DatasetSplit.TRAIN else "dev"
    data_path = translate.compile_data(
        tmp_dir, self.source_data_files(dataset_split),
        "%s-compiled-%s" % (self.name, tag))
    return text_problems.text2text_generate_encoded(
        text_problems.text2text_txt_iterator(data_path + ".lang1",
                                             data_path + ".lang2"),
        source_vocab, target_vocab)
