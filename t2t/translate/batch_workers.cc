#include "t2t/translate/batch_workers.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "t2t/core/logging.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/translator.h"

namespace t2t {

BatchWorkers::BatchWorkers(BatchQueue& queue, int workers, int threads, OnBatch on_batch)
    : queue_(queue), on_batch_(std::move(on_batch)) {
  const int n = std::max(1, workers);
  const int each = std::max(1, threads / n);
  for (int w = 0; w < n; ++w) threads_.emplace_back([this, each] { loop(each); });
}

BatchWorkers::~BatchWorkers() { join(); }

void BatchWorkers::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void BatchWorkers::loop(int threads) {
  at::set_num_threads(threads);
  while (auto batch = queue_.next_batch()) decode(*batch);
}

void BatchWorkers::decode(SentenceBatch& batch) {
  std::vector<std::vector<int64_t>> sources;
  std::vector<TargetGuide> guides;
  bool guided = false;
  sources.reserve(batch.items.size());
  for (const BatchItem& item : batch.items) {
    sources.push_back(item.request->sources()[item.index]);
    guides.push_back(item.request->guide(item.index));
    guided = guided || !guides.back().empty();
  }
  if (!guided) guides.clear();
  std::vector<int64_t> rows(sources.size());
  std::iota(rows.begin(), rows.end(), 0);
  try {
    DecodeCounts counts;
    auto results = batch.model->batch_translator->decode_batch(sources, rows, batch.search, &counts,
                                                                  0, guides);
    // Counted before the answers go out: a client that reads the server's
    // /metrics right after its answer sees its sentences.
    if (on_batch_) on_batch_(static_cast<int64_t>(sources.size()), counts.output_tokens);
    for (size_t i = 0; i < batch.items.size(); ++i)
      batch.items[i].request->complete(batch.items[i].index, std::move(results[i]));
  } catch (const std::exception& e) {
    spdlog::error("decoding a batch of {} sentences failed: {}", sources.size(), e.what());
    for (const BatchItem& item : batch.items)
      item.request->fail(std::string("decoding failed: ") + e.what());
  }
}

}  // namespace t2t
