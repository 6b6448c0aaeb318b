// The server's batch queue without a model or HTTP: when a batch is due,
// which sentences it holds, back-pressure, closing and cancelling, and how
// requests collect their translations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "t2t/translate/batch_queue.h"

using namespace std::chrono_literals;
using t2t::SentenceBatch;
using t2t::BatchPolicy;
using t2t::BatchQueue;
using t2t::PendingRequest;
using t2t::SearchOptions;

namespace {

// A source of n ids ending in EOS (1).
std::vector<int64_t> source(size_t n) {
  std::vector<int64_t> ids(n - 1, 5);
  ids.push_back(1);
  return ids;
}

std::shared_ptr<PendingRequest> request(const std::vector<size_t>& lengths,
                                        SearchOptions search = {},
                                        std::shared_ptr<const t2t::LoadedModel> model = nullptr) {
  std::vector<std::vector<int64_t>> sources;
  for (size_t n : lengths) sources.push_back(n == 0 ? std::vector<int64_t>{} : source(n));
  return std::make_shared<PendingRequest>(std::move(sources), search, model);
}

BatchPolicy policy(int64_t max_batch, std::chrono::microseconds delay, int64_t max_queue = 100,
                   std::chrono::microseconds quiet_gap = 0us) {
  BatchPolicy p;
  p.max_batch_size = max_batch;
  p.max_delay = delay;
  p.max_queue = max_queue;
  p.quiet_gap = quiet_gap;
  return p;
}

std::vector<size_t> lengths(const SentenceBatch& b) {
  std::vector<size_t> out;
  for (const auto& item : b.items) out.push_back(item.request->sources()[item.index].size());
  return out;
}

}  // namespace

TEST_CASE("a batch is due at once when max_batch_size sentences can share it", "[serve]") {
  BatchQueue queue(policy(3, 10s));
  REQUIRE(queue.submit(request({4, 5, 6, 7})) == BatchQueue::Admission::kQueued);
  const auto start = std::chrono::steady_clock::now();
  auto batch = queue.next_batch();
  REQUIRE(batch);
  CHECK(std::chrono::steady_clock::now() - start < 2s);  // not the 10 s delay
  CHECK(batch->items.size() == 3);
  CHECK(queue.depth() == 1);
}

TEST_CASE("a lone sentence waits max_delay for company, then goes alone", "[serve]") {
  BatchQueue queue(policy(8, 50ms));
  queue.submit(request({4}));
  const auto start = std::chrono::steady_clock::now();
  auto batch = queue.next_batch();
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE(batch);
  CHECK(batch->items.size() == 1);
  CHECK(waited >= 45ms);
  CHECK(batch->waited_us >= 45000);
}

TEST_CASE("sentences arriving within the delay join the oldest one's batch", "[serve]") {
  BatchQueue queue(policy(8, 200ms));
  queue.submit(request({4}));
  auto taker = std::async(std::launch::async, [&] { return queue.next_batch(); });
  std::this_thread::sleep_for(20ms);
  queue.submit(request({5, 6}));
  auto batch = taker.get();
  REQUIRE(batch);
  CHECK(batch->items.size() == 3);
}

TEST_CASE("a batch goes once arrivals pause for quiet_gap, before max_delay", "[serve]") {
  BatchQueue queue(policy(8, 10s, 100, 60ms));
  queue.submit(request({4}));
  auto taker = std::async(std::launch::async, [&] { return queue.next_batch(); });
  // Arrivals 30 ms apart keep the batch open; then the pause closes it.
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(30ms);
    queue.submit(request({5}));
  }
  const auto last = std::chrono::steady_clock::now();
  auto batch = taker.get();
  const auto after_last = std::chrono::steady_clock::now() - last;
  REQUIRE(batch);
  CHECK(batch->items.size() == 4);
  CHECK(after_last >= 50ms);
  CHECK(after_last < 5s);
}

TEST_CASE("the oldest sentence always goes, with those nearest to it in length", "[serve]") {
  BatchQueue queue(policy(3, 0us));
  queue.submit(request({10}));
  queue.submit(request({2, 30, 11, 9, 50}));
  auto batch = queue.next_batch();
  REQUIRE(batch);
  auto got = lengths(*batch);
  REQUIRE(got.size() == 3);
  CHECK(got[0] == 10);  // arrival order within the batch
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<size_t>{9, 10, 11});
  CHECK(queue.depth() == 3);
}

TEST_CASE("sentences with other search options or another model never share a batch", "[serve]") {
  BatchQueue queue(policy(8, 0us));
  SearchOptions wide;
  wide.beam_size = 8;
  auto other_model = std::shared_ptr<const t2t::LoadedModel>(
      reinterpret_cast<const t2t::LoadedModel*>(0x1), [](const t2t::LoadedModel*) {});
  queue.submit(request({4, 4}));
  queue.submit(request({4}, wide));
  queue.submit(request({4}, {}, other_model));
  queue.submit(request({4}));
  auto first = queue.next_batch();
  REQUIRE(first);
  CHECK(first->items.size() == 3);
  CHECK(first->search.beam_size == 4);
  auto second = queue.next_batch();
  REQUIRE(second);
  CHECK(second->items.size() == 1);
  CHECK(second->search.beam_size == 8);
  auto third = queue.next_batch();
  REQUIRE(third);
  CHECK(third->model == other_model);
}

TEST_CASE("a request that would overfill the queue is refused whole", "[serve]") {
  BatchQueue queue(policy(8, 10s, 4));
  CHECK(queue.submit(request({3, 3, 3})) == BatchQueue::Admission::kQueued);
  CHECK(queue.submit(request({3, 3})) == BatchQueue::Admission::kFull);
  CHECK(queue.depth() == 3);
  CHECK(queue.submit(request({3})) == BatchQueue::Admission::kQueued);
}

TEST_CASE("empty sources are answered at once and never queued", "[serve]") {
  BatchQueue queue(policy(8, 0us));
  auto r = request({0, 4, 1});  // 1: EOS alone
  CHECK(r->queued() == std::vector<size_t>{1});
  queue.submit(r);
  CHECK(queue.depth() == 1);
  auto batch = queue.next_batch();
  REQUIRE(batch);
  batch->items[0].request->complete(batch->items[0].index, t2t::Translation{{"x"}, {-1.0}});
  REQUIRE(r->wait());
  CHECK(r->translations()[0].texts == std::vector<std::string>{""});
  CHECK(r->translations()[1].texts == std::vector<std::string>{"x"});
  CHECK(r->translations()[2].texts == std::vector<std::string>{""});
}

TEST_CASE("a request is answered only when its last sentence is translated", "[serve]") {
  auto r = request({3, 4});
  auto waiter = std::async(std::launch::async, [&] { return r->wait(); });
  r->complete(1, t2t::Translation{{"b"}, {0.0}});
  CHECK(waiter.wait_for(50ms) == std::future_status::timeout);
  r->complete(0, t2t::Translation{{"a"}, {0.0}});
  CHECK(waiter.get());
  CHECK(r->translations()[0].texts[0] == "a");
  CHECK(r->translations()[1].texts[0] == "b");
}

TEST_CASE("closing hands out what is queued without delay, then ends", "[serve]") {
  BatchQueue queue(policy(8, 10s));
  queue.submit(request({4, 5}));
  queue.close();
  CHECK(queue.submit(request({4})) == BatchQueue::Admission::kClosed);
  const auto start = std::chrono::steady_clock::now();
  auto batch = queue.next_batch();
  REQUIRE(batch);
  CHECK(batch->items.size() == 2);
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK_FALSE(queue.next_batch());
}

TEST_CASE("cancelling fails the requests still waiting", "[serve]") {
  BatchQueue queue(policy(8, 10s));
  auto r = request({4, 5});
  queue.submit(r);
  CHECK(queue.cancel_waiting("stopping") == 2);
  CHECK_FALSE(r->wait());
  CHECK(r->error() == "stopping");
  CHECK(queue.depth() == 0);
}
