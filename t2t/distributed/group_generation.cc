#include "t2t/distributed/group_generation.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <algorithm>
#include <thread>

#include "t2t/core/error.h"

namespace t2t {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<uint8_t> store_bytes(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::string store_text(c10d::Store& store, const std::string& key) {
  const std::vector<uint8_t> bytes = store.get(key);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

std::string agree_generation(c10d::Store& store, int rank, int world_size,
                             std::chrono::milliseconds timeout) {
  const std::string size = std::to_string(world_size);
  const std::string joined_key = "t2t/joined/" + std::to_string(rank);
  if (rank == 0) {
    const std::string generation = std::to_string(store.add("t2t/generation", 1));
    store.set("t2t/leader", store_bytes(generation + " " + size));
    store.set(joined_key, store_bytes(generation));
    return generation;
  }
  const int64_t last = store.check({joined_key}) ? std::stoll(store_text(store, joined_key)) : 0;
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    if (store.check({"t2t/leader"})) {
      const std::string leader = store_text(store, "t2t/leader");
      const size_t space = leader.find(' ');
      const std::string generation = leader.substr(0, space);
      if (space != std::string::npos && leader.substr(space + 1) == size &&
          std::stoll(generation) > last) {
        store.set(joined_key, store_bytes(generation));
        return generation;
      }
    }
    if (Clock::now() > deadline)
      throw Error("worker " + std::to_string(rank) + " of " + size + " reached the store at "
                  "MASTER_ADDR:MASTER_PORT but worker 0 of its group did not start within " +
                  std::to_string((timeout.count() + 999) / 1000) + " s. Started again, the run "
                  "resumes from its last checkpoint");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

}  // namespace t2t
