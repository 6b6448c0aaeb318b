// Decoding several batches at once on the CPU: at decoding sizes one batch
// gains little from a second core, as its operations are too small to
// split, so batches side by side use the cores better.
#pragma once

#include <cstdint>
#include <functional>

namespace t2t {

// How many batches to decode at once with `threads` LibTorch threads in all
// and `batches` to do: `requested` if positive, else one per thread; never
// more than there are batches, at least 1.
int parallel_batches(int requested, int threads, int64_t batches);

// Calls decode(j) for j in [0, batches), `workers` at a time, each worker
// with threads / workers intra-op threads (at least 1). One worker runs on
// the calling thread. decode() must only touch its own data, or lock. The
// first exception is rethrown once every worker stopped; batches not yet
// started are skipped.
void for_each_batch(int64_t batches, int workers, int threads,
                    const std::function<void(int64_t)>& decode);

}  // namespace t2t
