// `--worker_gpu=N` on one machine: the program starts N copies of itself
// with torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, a free MASTER_PORT), so a worker
// cannot tell this launcher from torchrun.
#pragma once

#include <string>
#include <vector>

namespace t2t {

// Runs this program's own binary (self_executable()) with `args` (argv[0]
// first) as `workers` processes and waits for them. When one fails, the
// others are stopped (SIGTERM) and its exit status is returned; 0 when all
// succeed. Each worker prints its own errors.
int run_local_workers(const std::vector<std::string>& args, int workers);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace t2t
