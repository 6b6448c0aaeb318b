// The generation of a group of workers: a number every worker of the group
// agrees on and no earlier group in the same store used, under which the
// group's keys go. Under torchrun the workers share the agent's store,
// which outlives a restart of the group (--max_restarts), and
// TORCHELASTIC_RESTART_COUNT cannot tell groups apart: it counts one
// agent's restarts, so the workers of one group may see different counts
// (an agent whose workers were healthy when another's failed restarts them
// without counting).
//
// Worker 0 starts a generation; worker r takes the newest one started for
// a group of its size that is newer than the last one a worker r joined,
// which a group of that size always had (its ranks run 0..size-1).
#pragma once

#include <chrono>
#include <string>

namespace c10d {
class Store;
}

namespace t2t {

// Blocks worker `rank` (of world_size) until its group's generation is
// known, at most `timeout`; throws t2t::Error when worker 0 of its group
// has not started by then.
std::string agree_generation(c10d::Store& store, int rank, int world_size,
                             std::chrono::milliseconds timeout);

}  // namespace t2t
