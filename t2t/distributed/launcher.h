// N workers on one machine: the program starts N copies of itself with
// torchrun's environment, so a worker cannot tell it from torchrun.
#pragma once

#include <string>
#include <vector>

namespace t2t {

// Runs this binary with `args` (argv[0] first) as `workers` processes and
// waits. When one fails, the others get SIGTERM and its exit status is
// returned; 0 when all succeed.
int run_local_workers(const std::vector<std::string>& args, int workers);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

// Ends this worker, saying why, as soon as its launcher is gone, rather
// than write into an output directory a restarted launcher's workers may
// be using. Watches the parent from a thread; call once.
void exit_when_launcher_dies(int rank);

}  // namespace t2t
