// Decoding several batches at once on the CPU. At decoding sizes (tens of
// rows, hidden sizes of hundreds) one batch keeps one core busy but gains
// little from a second: most operations are too small to split, and
// splitting each costs a thread wake-up. Batches decoded side by side, one
// core each, use every core fully (CTranslate2 calls these inter_threads).
#pragma once

#include <cstdint>
#include <functional>

namespace t2t {

// How many batches to decode at once with `threads` LibTorch threads in all
// and `batches` to do: `requested` if positive, else one per thread; never
// more than there are batches, at least 1.
int parallel_batches(int requested, int threads, int64_t batches);

// Calls decode(j) for j in [0, batches), `workers` calls at a time, each
// worker thread running LibTorch with threads / workers intra-op threads
// (at least 1); the caller's thread count is restored afterwards. With one
// worker, runs on the calling thread unchanged. decode() must only touch
// what is its own, or lock. The first exception is rethrown once every
// worker has stopped; batches not yet started are then skipped.
void for_each_batch(int64_t batches, int workers, int threads,
                    const std::function<void(int64_t)>& decode);

}  // namespace t2t
