// An example plugin: a problem and an hparams set registered from outside
// t2t with the same macros t2t uses. The problem needs no data files: its
// samples are made up from a small word list, and the target is the source
// with its words in reverse order.
#include <memory>
#include <random>

#include "t2t/core/hparams.h"
#include "t2t/data/text_problem.h"

namespace {

class ReverseWords : public t2t::Text2TextProblem {
 public:
  std::string description() const override { return "example plugin: reverse a word sequence"; }
  t2t::VocabSpec vocab_spec() const override {
    t2t::VocabSpec spec;
    spec.type = t2t::VocabType::kToken;
    spec.size = 64;
    return spec;
  }
  std::vector<t2t::SplitSpec> dataset_splits() const override {
    return {{"train", 2}, {"dev", 1}};
  }
  std::unique_ptr<t2t::SampleStream> generate_samples(const std::string& split,
                                                      const std::string&) const override {
    static const char* kWords[] = {"red", "green", "blue", "cat", "dog", "bird", "one", "two",
                                   "three", "sun", "moon", "star", "tree", "river", "stone"};
    std::mt19937 rng(split == "train" ? 1 : 2);
    std::vector<t2t::TextPair> pairs(split == "train" ? 500 : 50);
    for (auto& pair : pairs) {
      std::vector<std::string> words(3 + rng() % 6);
      for (auto& w : words) w = kWords[rng() % 15];
      for (size_t i = 0; i < words.size(); ++i) {
        pair.source += (i ? " " : "") + words[i];
        pair.target += (i ? " " : "") + words[words.size() - 1 - i];
      }
    }
    return std::make_unique<t2t::VectorStream>(std::move(pairs));
  }
};
T2T_REGISTER_PROBLEM(ReverseWords);

t2t::HParams transformer_reverse_words() {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("num_hidden_layers", 1);
  hp.set("max_length", 16);
  return hp;
}
T2T_REGISTER_HPARAMS(transformer_reverse_words);

}  // namespace
