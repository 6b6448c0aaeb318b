#include "t2t/distributed/launcher.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/runtime.h"

namespace t2t {

namespace {

// Set in the environment of --worker_gpu's workers (to the launcher's pid).
constexpr const char* kLaunchedBy = "T2T_LAUNCHED_BY";

}  // namespace

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("cannot open a socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw Error("cannot find a free TCP port on 127.0.0.1: " + why);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

int run_local_workers(const std::vector<std::string>& args, int workers) {
  if (workers < 1) throw Error("the number of workers must be at least 1");
  const std::string port = std::to_string(free_local_port());
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const std::string self = self_executable();  // the workers keep the binary's name
  std::map<pid_t, int> running;  // pid -> rank
  for (int rank = 0; rank < workers; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(std::string("cannot start a worker process: ") + std::strerror(errno));
    if (pid == 0) {
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(workers).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(workers).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      ::setenv(kLaunchedBy, std::to_string(::getppid()).c_str(), 1);
      ::execv(self.c_str(), argv.data());
      std::fprintf(stderr, "cannot run worker %d: %s\n", rank, std::strerror(errno));
      ::_exit(127);
    }
    running[pid] = rank;
  }
  spdlog::info("started {} worker processes (torch.distributed, MASTER_PORT={})", workers, port);

  int result = 0;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const int rank = it->second;
    running.erase(it);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result == 0) {
      result = code;
      spdlog::error("worker {} stopped with exit status {}; stopping the other workers", rank,
                    code);
      for (const auto& [other, other_rank] : running) ::kill(other, SIGTERM);
    }
  }
  return result;
}

void exit_when_launcher_dies(int rank) {
  // Only under a launcher: torchrun's agent says so in the environment, and
  // so does --worker_gpu's. A process that a user started by hand with
  // WORLD_SIZE set may outlive its shell (nohup), as any program may.
  if (!std::getenv("TORCHELASTIC_RUN_ID") && !std::getenv(kLaunchedBy)) return;
  const pid_t launcher = ::getppid();
  if (launcher <= 1) return;  // its launcher is gone already, or it is init
  std::thread([launcher, rank] {
    // A parent that dies leaves the child to init or a subreaper: the
    // parent pid changes. Often enough to stop within a step or two.
    while (::getppid() == launcher) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    spdlog::error("worker {}: its launcher (pid {}) is gone; exiting now, without a checkpoint, "
                  "so as not to write into a run that a restarted launcher may be using. The "
                  "last complete checkpoint resumes the run",
                  rank, launcher);
    spdlog::default_logger()->flush();
    std::_Exit(1);
  }).detach();
}

}  // namespace t2t
