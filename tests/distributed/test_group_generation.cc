// The generation that keeps one group's keys from another's in a store
// that outlives restarts (group_generation.h), with the restart counts
// torchrun's agents may disagree on out of the picture.
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/distributed/group_generation.h"

using namespace std::chrono_literals;
using t2t::agree_generation;

namespace {

// Worker `rank` of `size` joining on a thread of its own: its generation
// once known.
struct Joining {
  std::atomic<bool> done{false};
  std::string generation, error;
  std::thread thread;
  Joining(c10d::Store& store, int rank, int size) {
    thread = std::thread([this, &store, rank, size] {
      try {
        generation = agree_generation(store, rank, size, 20s);
      } catch (const std::exception& e) {
        error = e.what();
      }
      done = true;
    });
  }
  ~Joining() {
    if (thread.joinable()) thread.join();
  }
  void join() { thread.join(); }
};

}  // namespace

TEST_CASE("a group's workers agree on a generation no earlier group used, whoever starts first",
          "[distributed][generation]") {
  c10d::HashStore store;
  // The first group: worker 0 first.
  CHECK(agree_generation(store, 0, 2, 1s) == "1");
  CHECK(agree_generation(store, 1, 2, 1s) == "1");

  // Restarted: worker 1 comes first and finds the dead group's generation,
  // which it must not take; it waits for the new worker 0.
  {
    Joining one(store, 1, 2);
    std::this_thread::sleep_for(150ms);
    CHECK_FALSE(one.done);
    CHECK(agree_generation(store, 0, 2, 1s) == "2");
    one.join();
    CHECK(one.error.empty());
    CHECK(one.generation == "2");
  }

  // Grown to three: worker 2 has never joined, and the newest generation
  // belongs to a group of two; both wait for worker 0.
  {
    Joining one(store, 1, 3), two(store, 2, 3);
    std::this_thread::sleep_for(150ms);
    CHECK_FALSE(one.done);
    CHECK_FALSE(two.done);
    CHECK(agree_generation(store, 0, 3, 1s) == "3");
    one.join();
    two.join();
    CHECK(one.generation == "3");
    CHECK(two.generation == "3");
  }

  // Shrunk to two again, worker 0 first this time.
  CHECK(agree_generation(store, 0, 2, 1s) == "4");
  CHECK(agree_generation(store, 1, 2, 1s) == "4");

  // No worker 0: a worker gives up after its timeout, saying why.
  CHECK_THROWS_WITH(agree_generation(store, 1, 2, 200ms),
                    Catch::Contains("worker 1 of 2") &&
                        Catch::Contains("worker 0 of its group did not start"));
}
