// Dynamic batching for Translator's shared queue: concurrent callers'
// sentences wait in one queue, and each decoding worker takes the next
// batch of sentences that share a model and search and are close in
// length. Free of LibTorch: it routes ids and texts only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "t2t/search/search_options.h"
#include "t2t/search/target_guide.h"
#include "t2t/translate/translation.h"

namespace t2t {

struct LoadedModel;  // translator.h; only compared and carried here

struct BatchPolicy {
  int64_t max_batch_size = 32;  // sentences in one batch
  // How long the oldest waiting sentence may wait for others to join it.
  std::chrono::microseconds max_delay{5000};
  // A batch also goes once no sentence has arrived for this long (0: off):
  // requests come in bursts, and waiting past one leaves a core idle.
  std::chrono::microseconds quiet_gap{1000};
  int64_t max_queue = 1024;  // sentences waiting at most; beyond, requests are refused
};

// One request's encoded sources, the model they were encoded for, and its
// translations as the workers fill them in. Thread-safe.
class PendingRequest {
 public:
  // Sources with no ids or EOS alone are answered at once with an empty
  // text, never queued.
  // `guides`: one per source, or none.
  PendingRequest(std::vector<std::vector<int64_t>> sources, SearchOptions search,
                 std::shared_ptr<const LoadedModel> model, std::vector<TargetGuide> guides = {});

  const std::vector<std::vector<int64_t>>& sources() const { return sources_; }
  // The guide of source i (an empty one when the request has none).
  const TargetGuide& guide(size_t i) const;
  const SearchOptions& search() const { return search_; }
  const std::shared_ptr<const LoadedModel>& model() const { return model_; }
  // Indices of the sources that need decoding.
  const std::vector<size_t>& queued() const { return queued_; }

  void complete(size_t index, Translation translation);
  // Fails the whole request; the first reason is kept.
  void fail(const std::string& why);
  // Blocks until every source is translated or the request failed; true
  // when it succeeded.
  bool wait();

  // Valid once wait() returned true.
  const std::vector<Translation>& translations() const { return translations_; }
  std::string error() const;

 private:
  std::vector<std::vector<int64_t>> sources_;
  std::vector<TargetGuide> guides_;
  SearchOptions search_;
  std::shared_ptr<const LoadedModel> model_;
  std::vector<size_t> queued_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::vector<Translation> translations_;
  size_t remaining_ = 0;
  bool failed_ = false;
  std::string error_;
};

struct BatchItem {
  std::shared_ptr<PendingRequest> request;
  size_t index = 0;  // into request->sources()
};

// Sentences to decode together: one model, one set of search options.
struct SentenceBatch {
  std::shared_ptr<const LoadedModel> model;
  SearchOptions search;
  std::vector<BatchItem> items;
  int64_t waited_us = 0;  // how long its oldest sentence waited
};

// True when two searches give the same results and can share a batch.
bool same_search(const SearchOptions& a, const SearchOptions& b);

class BatchQueue {
 public:
  explicit BatchQueue(BatchPolicy policy);

  enum class Admission { kQueued, kFull, kClosed };
  // Queues the request's sentences, all or none: kFull when they would
  // take the queue over max_queue, kClosed after close().
  Admission submit(const std::shared_ptr<PendingRequest>& request);

  // Blocks until a batch is due (max_batch_size sentences can join the
  // oldest, or max_delay or quiet_gap passed, or close()), and takes it:
  // the oldest sentence (none starves) and those closest to it in length.
  // Returns nothing once closed and empty.
  std::optional<SentenceBatch> next_batch();

  // No more submissions; what is queued is still handed out, without delay.
  void close();
  // Fails the requests of every waiting sentence with `why` and empties the
  // queue. Returns how many sentences.
  int64_t cancel_waiting(const std::string& why);

  int64_t depth() const;  // sentences waiting
  const BatchPolicy& policy() const { return policy_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    BatchItem item;
    size_t length = 0;
    Clock::time_point since;
  };
  SentenceBatch take_batch_locked(Clock::time_point now);
  bool can_join(const Entry& oldest, const Entry& other) const;

  BatchPolicy policy_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Entry> waiting_;  // in arrival order
  Clock::time_point last_arrival_;
  bool closed_ = false;
};

}  // namespace t2t
