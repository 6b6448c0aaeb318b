// Decoding workers over Translator's BatchQueue: each takes the next batch,
// decodes it with the batch's model and answers its requests.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "t2t/translate/batch_queue.h"

namespace t2t {

class BatchWorkers {
 public:
  // After each decoded batch: its sentences and output tokens (may be
  // empty; called from the workers).
  using OnBatch = std::function<void(int64_t sentences, int64_t output_tokens)>;

  // Starts `workers` threads (at least 1), each with threads / workers
  // LibTorch threads of its own (OpenMP's count is per thread).
  BatchWorkers(BatchQueue& queue, int workers, int threads, OnBatch on_batch = nullptr);
  // Joins: the queue must be closed (they end once it is closed and empty).
  ~BatchWorkers();
  BatchWorkers(const BatchWorkers&) = delete;
  BatchWorkers& operator=(const BatchWorkers&) = delete;

  void join();
  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void loop(int threads);
  void decode(SentenceBatch& batch);

  BatchQueue& queue_;
  OnBatch on_batch_;
  std::vector<std::thread> threads_;
};

}  // namespace t2t
