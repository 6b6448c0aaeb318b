#include "t2t/data/example_mix.h"

#include <algorithm>

#include "t2t/core/error.h"
#include "t2t/data/reader_rng.h"

namespace t2t {

namespace {

std::vector<double> weights_of(const DataMix& mix) {
  std::vector<double> w;
  for (const MixPart& p : mix) w.push_back(p.weight);
  return w;
}

}  // namespace

MixedExamples::MixedExamples(const DataMix& mix, const BatchingScheme& scheme,
                             const ReaderOptions& options)
    : mix_(mix), schedule_(weights_of(mix)) {
  if (!options.training)
    throw Error("a data mix is read for training only; evaluation reads one split");
  // Reserved first: each source keeps a reference to its part's options.
  options_.reserve(mix.size());
  int64_t files = 0;
  for (size_t i = 0; i < mix.size(); ++i) {
    if (mix[i].files.empty()) throw Error("training part '" + mix[i].name + "' has no files");
    ReaderOptions o = options;
    o.seed = reader_seed(options.seed, 0x9a27ULL + i);
    options_.push_back(o);
    first_file_.push_back(files);
    files += static_cast<int64_t>(mix[i].files.size());
  }
  for (size_t i = 0; i < mix.size(); ++i)
    parts_.push_back(std::make_unique<ExampleSource>(mix[i].files, scheme, options_[i]));
}

MixedExamples::~MixedExamples() = default;

bool MixedExamples::next(DecodedExample* ex) {
  const size_t i = schedule_.next();
  ExampleSource& part = *parts_[i];
  while (!part.next(ex)) part.next_epoch();  // throws when a whole epoch keeps nothing
  ex->address.file += first_file_[i];
  schedule_.take(i);
  return true;
}

int64_t MixedExamples::epoch() const {
  int64_t fewest = parts_.front()->epoch();
  for (const auto& p : parts_) fewest = std::min(fewest, p->epoch());
  return fewest;
}

void MixedExamples::save(ReaderState* state) const {
  state->epoch = epoch();
  state->file_position = 0;
  state->record_in_file = 0;
  state->mix.clear();
  for (size_t i = 0; i < parts_.size(); ++i) {
    MixPosition m;
    m.part = mix_[i].name;
    m.weight = mix_[i].weight;
    m.num_files = static_cast<int64_t>(mix_[i].files.size());
    m.epoch = parts_[i]->epoch();
    m.file_position = parts_[i]->file_position();
    m.record_in_file = parts_[i]->record_in_file();
    m.taken = schedule_.taken()[i];
    state->mix.push_back(m);
  }
}

void MixedExamples::restore(const ReaderState& state) {
  auto saved = [&] {
    DataMix was;
    for (const MixPosition& m : state.mix) was.push_back({m.part, {}, m.weight});
    return was.empty() ? std::string("no mix") : describe_mix(was);
  };
  bool fits = state.mix.size() == mix_.size();
  for (size_t i = 0; fits && i < mix_.size(); ++i)
    fits = state.mix[i].part == mix_[i].name && state.mix[i].weight == mix_[i].weight &&
           state.mix[i].num_files == static_cast<int64_t>(mix_[i].files.size());
  if (!fits)
    throw Error("reader state does not fit this reader: it was saved reading the training mix (" +
                saved() + "), this reader mixes (" + describe_mix(mix_) +
                "); resume with the parts and weights it was saved with, or train into a new "
                "output_dir");
  std::vector<int64_t> taken;
  for (size_t i = 0; i < mix_.size(); ++i) {
    const MixPosition& m = state.mix[i];
    parts_[i]->seek(m.epoch, m.file_position, m.record_in_file);
    taken.push_back(m.taken);
  }
  schedule_.restore(taken);
}

size_t MixedExamples::part_of(int64_t file) const {
  const auto it = std::upper_bound(first_file_.begin(), first_file_.end(), file);
  return static_cast<size_t>(it - first_file_.begin()) - 1;
}

std::vector<DecodedExample> MixedExamples::load(
    const std::vector<RecordAddress>& addresses) const {
  const int64_t files = first_file_.back() + static_cast<int64_t>(mix_.back().files.size());
  // Each part's addresses to its own source, then back into their places.
  std::vector<std::vector<RecordAddress>> local(parts_.size());
  std::vector<std::vector<size_t>> slots(parts_.size());
  for (size_t k = 0; k < addresses.size(); ++k) {
    const RecordAddress& a = addresses[k];
    if (a.file < 0 || a.file >= files)
      throw Error("reader state does not fit this reader: record address " +
                  std::to_string(a.file) + ":" + std::to_string(a.record) + " with " +
                  std::to_string(files) + " files");
    const size_t i = part_of(a.file);
    local[i].push_back({a.file - first_file_[i], a.record});
    slots[i].push_back(k);
  }
  std::vector<DecodedExample> out(addresses.size());
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (local[i].empty()) continue;
    std::vector<DecodedExample> got = parts_[i]->load(local[i]);
    for (size_t j = 0; j < got.size(); ++j) {
      got[j].address.file += first_file_[i];
      out[slots[i][j]] = std::move(got[j]);
    }
  }
  return out;
}

}  // namespace t2t
