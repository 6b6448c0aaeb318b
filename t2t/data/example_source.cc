// ExampleSource (example_source.h): file order and worker sharding per
// epoch, decoding and length filtering, and reading records by address.
#include "t2t/data/example_source.h"

#include <algorithm>
#include <map>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/data/batch_reader.h"
#include "t2t/data/reader_rng.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"

namespace t2t {

ExampleSource::ExampleSource(const std::vector<std::string>& files, const BatchingScheme& scheme,
                             const ReaderOptions& options)
    : files_(files), scheme_(scheme), options_(options) {
  record_sharding_ = static_cast<int64_t>(files_.size()) < options_.num_workers;
  start_epoch(0);
}

ExampleSource::~ExampleSource() = default;

// Shuffled afresh each training epoch from the seed, the worker and the
// epoch alone, so that a restored reader finds the same order.
std::vector<int64_t> ExampleSource::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order;
  const int64_t n = static_cast<int64_t>(files_.size());
  for (int64_t i = 0; i < n; ++i)
    if (record_sharding_ || i % options_.num_workers == options_.worker) order.push_back(i);
  if (options_.training) {
    ReaderRng r(reader_seed(reader_seed(options_.seed, static_cast<uint64_t>(options_.worker)),
                            static_cast<uint64_t>(epoch) + 1));
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[r.below(i)]);
  }
  return order;
}

void ExampleSource::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  order_ = epoch_order(epoch);
  file_position_ = 0;
  record_in_file_ = 0;
  reader_.reset();
  fresh_epoch_ = true;
  kept_in_epoch_ = 0;
}

void ExampleSource::next_epoch() {
  if (fresh_epoch_ && kept_in_epoch_ == 0) {
    std::string which = options_.num_workers > 1 ? " for worker " + std::to_string(options_.worker) +
                                                       " of " + std::to_string(options_.num_workers)
                                                 : std::string();
    throw Error("no training example" + which + " in " + std::to_string(files_.size()) +
                " file(s) starting with " + files_.front() + " has a length between " +
                std::to_string(scheme_.min_length) + " and max_length " +
                std::to_string(scheme_.max_length));
  }
  start_epoch(epoch_ + 1);
}

void ExampleSource::seek(int64_t epoch, int64_t file_position, int64_t record_in_file) {
  start_epoch(epoch);
  if (file_position < 0 || file_position > static_cast<int64_t>(order_.size()) ||
      record_in_file < 0)
    throw Error("reader state does not fit this reader: file_position " +
                std::to_string(file_position) + " of " + std::to_string(order_.size()) +
                " files, record_in_file " + std::to_string(record_in_file));
  file_position_ = file_position;
  record_in_file_ = record_in_file;
  fresh_epoch_ = file_position_ == 0 && record_in_file_ == 0;
}

void ExampleSource::save(ReaderState* state) const {
  state->epoch = epoch_;
  state->file_position = file_position_;
  state->record_in_file = record_in_file_;
}

void ExampleSource::restore(const ReaderState& state) {
  if (!state.mix.empty())
    throw Error("reader state does not fit this reader: it was saved reading a training mix of " +
                std::to_string(state.mix.size()) + " parts, this reader reads one split; resume "
                "with the problem it was saved with, or train into a new output_dir");
  seek(state.epoch, state.file_position, state.record_in_file);
}

bool ExampleSource::epoch_read() const {
  return file_position_ >= static_cast<int64_t>(order_.size());
}

bool ExampleSource::next(DecodedExample* ex) {
  std::string record;
  while (!epoch_read()) {
    const int64_t file = order_[static_cast<size_t>(file_position_)];
    if (!reader_) open(file, record_in_file_);
    const bool mine =
        !record_sharding_ || record_in_file_ % options_.num_workers == options_.worker;
    if (!(mine ? reader_->next(&record) : reader_->skip())) {
      reader_.reset();
      ++file_position_;
      record_in_file_ = 0;
      continue;
    }
    const RecordAddress address{file, record_in_file_++};
    if (!mine) continue;
    decode(record, address, ex);
    if (keep(*ex)) {
      ++kept_in_epoch_;
      return true;
    }
  }
  return false;
}

// Opens files_[file] and steps over its first `skip` records.
void ExampleSource::open(int64_t file, int64_t skip) {
  const std::string& path = files_[static_cast<size_t>(file)];
  reader_ = std::make_unique<TFRecordReader>(path);
  for (int64_t i = 0; i < skip; ++i)
    if (!reader_->skip())
      throw Error("reader state does not fit " + path + ": it has " + std::to_string(i) +
                  " records, the state expects at least " + std::to_string(skip));
}

void ExampleSource::decode(const std::string& record, const RecordAddress& address,
                           DecodedExample* ex) const {
  Int64Features f = parse_example(record);
  auto targets = f.find("targets");
  if (targets == f.end())
    throw Error("record " + std::to_string(address.record) + " of " +
                files_[static_cast<size_t>(address.file)] + " has no 'targets' feature");
  ex->address = address;
  ex->targets = std::move(targets->second);
  auto inputs = f.find("inputs");
  ex->inputs = inputs == f.end() ? std::vector<int64_t>() : std::move(inputs->second);
  // The data's source EOS, where its unaligned target words are linked
  // (alignment_feature.h): NULL only in the data's direction.
  const auto data_source_eos = static_cast<int64_t>(ex->inputs.size()) - 1;
  const auto data_target_eos = static_cast<int64_t>(ex->targets.size()) - 1;
  if (options_.reversed) std::swap(ex->inputs, ex->targets);
  auto cut = [](std::vector<int64_t>* v, int64_t n) {
    if (n > 0 && static_cast<int64_t>(v->size()) > n) v->resize(static_cast<size_t>(n));
  };
  cut(&ex->inputs, options_.max_input_seq_length);
  cut(&ex->targets, options_.max_target_seq_length);
  auto links = f.find("alignment");
  ex->aligned = links != f.end();
  ex->alignment.clear();
  if (ex->aligned) {
    const std::vector<int64_t>& flat = links->second;
    if (flat.size() % 2 != 0)
      throw Error("record " + std::to_string(address.record) + " of " +
                  files_[static_cast<size_t>(address.file)] +
                  " has an 'alignment' feature of odd length " + std::to_string(flat.size()) +
                  ": it holds (source position, target position) pairs");
    // The files hold (source, target) pairs of the data's direction.
    // Reversed, the links to the data's source EOS would tie the model's
    // target EOS to every unaligned input word: they go, but EOS to EOS.
    const size_t in = options_.reversed ? 1 : 0, out = 1 - in;
    for (size_t k = 0; k + 1 < flat.size(); k += 2) {
      if (options_.reversed && flat[k] == data_source_eos && flat[k + 1] != data_target_eos)
        continue;
      const int64_t i = flat[k + in], t = flat[k + out];
      if (i < 0 || t < 0) continue;
      if (i >= static_cast<int64_t>(ex->inputs.size()) ||
          t >= static_cast<int64_t>(ex->targets.size()))
        continue;
      ex->alignment.push_back(i);
      ex->alignment.push_back(t);
    }
  }
  ex->length = static_cast<int64_t>(std::max(ex->inputs.size(), ex->targets.size()));
}

bool ExampleSource::keep(const DecodedExample& ex) const {
  if (ex.length < scheme_.min_length) return false;
  const bool drop_long = options_.training || options_.eval_drop_long_sequences;
  return !(drop_long && ex.length > scheme_.max_length);
}

std::vector<DecodedExample> ExampleSource::load(const std::vector<RecordAddress>& addresses) const {
  std::vector<DecodedExample> out(addresses.size());
  std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> by_file;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const RecordAddress& a = addresses[i];
    if (a.file < 0 || a.file >= static_cast<int64_t>(files_.size()) || a.record < 0)
      throw Error("reader state does not fit this reader: record address " +
                  std::to_string(a.file) + ":" + std::to_string(a.record) + " with " +
                  std::to_string(files_.size()) + " files");
    by_file[a.file].push_back({a.record, i});
  }
  std::string record;
  for (auto& [file, wanted] : by_file) {
    std::sort(wanted.begin(), wanted.end());
    const std::string& path = files_[static_cast<size_t>(file)];
    TFRecordReader reader(path);
    int64_t read = 0;  // records consumed; `record` holds number read - 1
    for (const auto& [index, slot] : wanted) {
      // The same record can wait twice (copies from two epochs).
      if (read == 0 || index != read - 1) {
        bool ok = true;
        for (; ok && read < index; ++read) ok = reader.skip();
        if (!ok || !reader.next(&record))
          throw Error("reader state does not fit " + path + ": it has no record " +
                      std::to_string(index));
        ++read;
      }
      decode(record, addresses[slot], &out[slot]);
    }
  }
  return out;
}

}  // namespace t2t
