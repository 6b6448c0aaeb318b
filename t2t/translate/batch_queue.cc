#include "t2t/translate/batch_queue.h"

#include <algorithm>
#include <cstdlib>

#include "t2t/core/error.h"
#include "t2t/translate/decode_batches.h"

namespace t2t {

PendingRequest::PendingRequest(std::vector<std::vector<int64_t>> sources, SearchOptions search,
                               std::shared_ptr<const LoadedModel> model,
                               std::vector<TargetGuide> guides)
    : sources_(std::move(sources)),
      guides_(std::move(guides)),
      search_(search),
      model_(std::move(model)),
      translations_(sources_.size()) {
  if (!guides_.empty() && guides_.size() != sources_.size())
    throw Error("PendingRequest: " + std::to_string(guides_.size()) + " guides for " +
                std::to_string(sources_.size()) + " sources");
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (is_empty_source(sources_[i])) {
      translations_[i].texts = {""};
      translations_[i].scores = {0.0};
    } else {
      queued_.push_back(i);
    }
  }
  remaining_ = queued_.size();
}

const TargetGuide& PendingRequest::guide(size_t i) const {
  static const TargetGuide none;
  return guides_.empty() ? none : guides_[i];
}

void PendingRequest::complete(size_t index, Translation translation) {
  std::lock_guard<std::mutex> lock(mutex_);
  translations_[index] = std::move(translation);
  if (remaining_ > 0 && --remaining_ == 0) done_.notify_all();
}

void PendingRequest::fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_) error_ = why;
  failed_ = true;
  done_.notify_all();
}

bool PendingRequest::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return failed_ || remaining_ == 0; });
  return !failed_;
}

std::string PendingRequest::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool same_search(const SearchOptions& a, const SearchOptions& b) {
  return a.beam_size == b.beam_size && a.alpha == b.alpha && a.extra_length == b.extra_length &&
         a.num_return == b.num_return && a.stop_early == b.stop_early &&
         a.patience == b.patience && a.drop_finished == b.drop_finished &&
         a.no_repeat_ngram_size == b.no_repeat_ngram_size &&
         a.repetition_penalty == b.repetition_penalty &&
         a.alignment_threshold == b.alignment_threshold &&
         a.alignment == b.alignment &&
         (!a.alignment || (a.alignment_probe.layer == b.alignment_probe.layer &&
                           a.alignment_probe.head == b.alignment_probe.head));
}

BatchQueue::BatchQueue(BatchPolicy policy) : policy_(policy) {
  policy_.max_batch_size = std::max<int64_t>(1, policy_.max_batch_size);
  policy_.max_queue = std::max<int64_t>(1, policy_.max_queue);
}

BatchQueue::Admission BatchQueue::submit(const std::shared_ptr<PendingRequest>& request) {
  const auto now = Clock::now();
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return Admission::kClosed;
    const auto& queued = request->queued();
    if (static_cast<int64_t>(waiting_.size() + queued.size()) > policy_.max_queue)
      return Admission::kFull;
    // A worker waits without a deadline only on an empty queue, and else
    // until the batch is due by time: wake it only when that changes, or
    // when a batch may have filled, not for every sentence of a burst.
    wake = waiting_.empty() ||
           static_cast<int64_t>(waiting_.size() + queued.size()) >= policy_.max_batch_size;
    for (size_t index : queued)
      waiting_.push_back(Entry{BatchItem{request, index}, request->sources()[index].size(), now});
    if (!queued.empty()) last_arrival_ = now;
  }
  if (wake) changed_.notify_all();
  return Admission::kQueued;
}

bool BatchQueue::can_join(const Entry& oldest, const Entry& other) const {
  return other.item.request->model() == oldest.item.request->model() &&
         same_search(other.item.request->search(), oldest.item.request->search());
}

std::optional<SentenceBatch> BatchQueue::next_batch() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (waiting_.empty()) {
      if (closed_) return std::nullopt;
      changed_.wait(lock);
      continue;
    }
    const auto now = Clock::now();
    const Entry& oldest = waiting_.front();
    auto due = oldest.since + policy_.max_delay;
    if (policy_.quiet_gap.count() > 0) due = std::min(due, last_arrival_ + policy_.quiet_gap);
    int64_t joinable = 0;
    for (const Entry& e : waiting_)
      if (can_join(oldest, e) && ++joinable >= policy_.max_batch_size) break;
    if (closed_ || joinable >= policy_.max_batch_size || now >= due) {
      SentenceBatch batch = take_batch_locked(now);
      lock.unlock();
      changed_.notify_all();  // another worker may find a batch due in what is left
      return batch;
    }
    changed_.wait_until(lock, due);
  }
}

SentenceBatch BatchQueue::take_batch_locked(Clock::time_point now) {
  const Entry oldest = waiting_.front();
  // Candidates that may join the oldest, nearest in length first (earlier
  // arrivals first among equals), so that a batch wastes little on padding.
  std::vector<size_t> candidates;
  for (size_t i = 1; i < waiting_.size(); ++i)
    if (can_join(oldest, waiting_[i])) candidates.push_back(i);
  auto distance = [&](size_t i) {
    return std::llabs(static_cast<long long>(waiting_[i].length) -
                      static_cast<long long>(oldest.length));
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](size_t a, size_t b) { return distance(a) < distance(b); });
  const size_t take = std::min(candidates.size(), static_cast<size_t>(policy_.max_batch_size - 1));
  std::vector<bool> taken(waiting_.size(), false);
  taken[0] = true;
  for (size_t k = 0; k < take; ++k) taken[candidates[k]] = true;

  SentenceBatch batch;
  batch.model = oldest.item.request->model();
  batch.search = oldest.item.request->search();
  batch.waited_us =
      std::chrono::duration_cast<std::chrono::microseconds>(now - oldest.since).count();
  std::deque<Entry> rest;
  for (size_t i = 0; i < waiting_.size(); ++i) {
    if (taken[i])
      batch.items.push_back(std::move(waiting_[i].item));
    else
      rest.push_back(std::move(waiting_[i]));
  }
  waiting_.swap(rest);
  return batch;
}

void BatchQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

int64_t BatchQueue::cancel_waiting(const std::string& why) {
  std::deque<Entry> cancelled;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled.swap(waiting_);
  }
  changed_.notify_all();
  for (Entry& e : cancelled) e.item.request->fail(why);
  return static_cast<int64_t>(cancelled.size());
}

int64_t BatchQueue::depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(waiting_.size());
}

}  // namespace t2t
