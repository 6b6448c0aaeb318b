#include "t2t/translate/parallel_batches.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace t2t {

int parallel_batches(int requested, int threads, int64_t batches) {
  const int64_t want = requested > 0 ? requested : std::max(1, threads);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(want, batches)));
}

void for_each_batch(int64_t batches, int workers, int threads,
                    const std::function<void(int64_t)>& decode) {
  if (workers <= 1) {
    for (int64_t j = 0; j < batches; ++j) decode(j);
    return;
  }
  const int intra = std::max(1, threads / workers);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      // OpenMP's thread count is per thread: each worker sets its own.
      at::set_num_threads(intra);
      for (int64_t j; !failed && (j = next++) < batches;) {
        try {
          decode(j);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          failed = true;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  // MKL's setting is process-wide: the workers changed it.
  at::set_num_threads(threads);
  if (error) std::rethrow_exception(error);
}

}  // namespace t2t
