// What the torchrun, two-host and fault tests share: the real torchrun,
// the t2t-trainer processes a run left, two hosts on a real link, and the
// check that a run left no half-written file.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/test_util.h"

namespace t2t::test {

// torchrun beside the tests' Python, or "" when that Python has no torch.
inline std::string torchrun() {
  const std::filesystem::path path = std::filesystem::path(T2T_TEST_PYTHON).parent_path() / "torchrun";
  return std::filesystem::exists(path) ? path.string() : "";
}

// A small transformer_tiny on the bundled sample, one thread, no evaluations.
inline std::string tiny_trainer_flags(const std::string& data, const std::string& out) {
  return "--problem=translate_enzh_sample --model=transformer --hparams_set=transformer_tiny "
         "--hparams='batch_size=512,hidden_size=64,filter_size=128,num_heads=2' --device=cpu "
         "--threads=1 --schedule=train --log_step_count_steps=10 --data_dir=" + data +
         " --output_dir=" + out;
}

// The t2t-trainer processes whose command line names `out`, in any network
// namespace (they share the process namespace).
inline std::vector<pid_t> trainers_of(const std::string& out) {
  std::vector<pid_t> found;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream comm_in(e.path() / "comm");
    std::string comm;
    std::getline(comm_in, comm);
    if (comm == "t2t-trainer" && cmdline.find(out) != std::string::npos)
      found.push_back(std::stoi(name));
  }
  return found;
}

// Waits up to `seconds` for every trainer of `out` to end; kills (and
// returns) those left, so that no test leaves anything running.
inline std::vector<pid_t> wait_trainers_gone(const std::string& out, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!trainers_of(out).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto left = trainers_of(out);
  for (pid_t pid : left) ::kill(pid, SIGKILL);
  return left;
}

// Every file a run left under `dir` is complete: none under a temporary
// name, every checkpoint loads whole, every event file reads to its end. Returns the newest step saved.
inline int64_t check_files_complete(const std::string& dir) {
  int64_t newest = -1;
  const std::regex checkpoint("model\\.ckpt-(\\d+)\\.pt");
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    INFO(f.path());
    CHECK(name.find(".tmp") == std::string::npos);
    if (name.rfind("events.out.tfevents.", 0) == 0) {
      // Appended to as the run goes: every record in it whole.
      const auto read_all = [&] {
        t2t::TFRecordReader reader(f.path().string());
        std::string record;
        while (reader.next(&record)) {
        }
      };
      CHECK_NOTHROW(read_all());
      continue;
    }
    std::smatch m;
    if (!std::regex_match(name, m, checkpoint)) continue;
    t2t::CheckpointMeta meta;
    CHECK_NOTHROW(t2t::read_checkpoint_tensors(f.path().string(), &meta));
    CHECK(meta.step == std::stoll(m[1]));
    if (f.path().parent_path() == std::filesystem::path(dir)) newest = std::max<int64_t>(newest, meta.step);
  }
  return newest;
}

// Two checkpoints hold the same weights, bit for bit.
inline void check_same_weights(const std::string& a_path, const std::string& b_path) {
  t2t::CheckpointMeta meta;
  const t2t::TensorMap a = t2t::read_checkpoint_tensors(a_path, &meta);
  const t2t::TensorMap b = t2t::read_checkpoint_tensors(b_path, &meta);
  REQUIRE(a.size() == b.size());
  REQUIRE(!a.empty());
  size_t equal = 0;
  for (const auto& [key, t] : a) equal += b.count(key) && t.equal(b.at(key));
  CHECK(equal == a.size());
}

// Two network namespaces, "<name>a" (10.231.<n>.1) and "<name>b"
// (10.231.<n>.2), joined by a veth pair; removed when this goes (the pair
// goes with them).
class TwoHosts {
 public:
  TwoHosts() {
    const int n = static_cast<int>(::getpid() % 200) + 20;
    name_ = "t2tnet" + std::to_string(::getpid());
    subnet_ = "10.231." + std::to_string(n) + ".";
    const std::string a = name_ + "a", b = name_ + "b";
    const std::string va = interface(0), vb = interface(1);
    const auto r = run_command("ip netns add " + a + " && ip netns add " + b +
                               " && ip link add " + va + " type veth peer name " + vb +
                               " && ip link set " + va + " netns " + a + " && ip link set " + vb +
                               " netns " + b + " && ip -n " + a + " addr add " + subnet_ +
                               "1/24 dev " + va + " && ip -n " + b + " addr add " + subnet_ +
                               "2/24 dev " + vb + " && ip -n " + a + " link set " + va +
                               " up && ip -n " + b + " link set " + vb + " up && ip -n " + a +
                               " link set lo up && ip -n " + b + " link set lo up");
    ok_ = r.exit_code == 0;
    why_ = r.output;
  }
  ~TwoHosts() { run_command("ip netns del " + name_ + "a; ip netns del " + name_ + "b"); }
  TwoHosts(const TwoHosts&) = delete;
  TwoHosts& operator=(const TwoHosts&) = delete;

  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  // Runs `command` in host 0 or 1.
  std::string in(int host, const std::string& command) const {
    return "ip netns exec " + name_ + (host == 0 ? "a " : "b ") + command;
  }
  std::string address(int host) const { return subnet_ + (host == 0 ? "1" : "2"); }
  std::string interface(int host) const {
    return "t2tv" + std::to_string(::getpid()) + (host == 0 ? "a" : "b");
  }
  // Cuts host 1's end of the link, or mends it: nothing crosses while it is down.
  bool set_link(bool up) const {
    return run_command("ip -n " + name_ + "b link set " + interface(1) + (up ? " up" : " down"))
               .exit_code == 0;
  }

 private:
  std::string name_, subnet_, why_;
  bool ok_ = false;
};

}  // namespace t2t::test
