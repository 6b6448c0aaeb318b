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

// For a worker of a launcher (torchrun's agent, or --worker_gpu's first
// process): ends this process, with a line naming the launcher, as soon as
// the launcher is gone (killed with SIGKILL, say), instead of training on
// and writing checkpoints into an --output_dir that a restarted launcher's
// workers may be using. Watches the parent process from a thread; call once.
void exit_when_launcher_dies(int rank);

}  // namespace t2t
