// Training across two hosts on a real network link: two network namespaces
// made by the test, joined by a veth pair with private addresses inside
// them only, one torchrun agent in each (the static rendezvous the README
// shows), the real t2t-trainer over Gloo across the link. Everything the
// test creates it removes, failing or not. Without the privilege to make
// namespaces the test is reported skipped, with the reason.
#include <ATen/core/Tensor.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>

#include "t2t/checkpoint/checkpoint.h"
#include "tests/support/background_process.h"
#include "tests/support/test_util.h"
#include "tests/support/torchrun_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::run_command;
using t2t::test::TempDir;
using t2t::test::torchrun;
using t2t::test::TwoHosts;

TEST_CASE("two hosts on a real link train over Gloo under torchrun", "[distributed][two_hosts][e2e]") {
  const std::string launcher = torchrun();
  if (launcher.empty()) T2T_SKIP("no torchrun beside " << T2T_TEST_PYTHON);
  TwoHosts hosts;
  if (!hosts.ok())
    T2T_SKIP("cannot make network namespaces here (root and ip netns are needed): " << hosts.why());
  TempDir dir("two_hosts");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data).exit_code == 0);
  const std::string out = dir / "run";
  const std::string trainer_at =
      " --no-python ./t2t-trainer --problem=translate_enzh_sample --model=transformer "
      "--hparams_set=transformer_tiny --hparams='batch_size=512,hidden_size=64,filter_size=128,"
      "num_heads=2' --device=cpu --threads=1 --schedule=train --log_step_count_steps=10 "
      "--train_steps=30 --data_dir=" + data + " --output_dir=";
  const std::string trainer = trainer_at + out;
  const auto agent = [&](int host) {
    return hosts.in(host, launcher + " --nnodes=2 --nproc_per_node=1 --node_rank=" +
                              std::to_string(host) + " --master_addr=" + hosts.address(0) +
                              " --master_port=29517" + trainer);
  };
  t2t::test::BackgroundProcess host0(agent(0), dir / "host0.log");
  t2t::test::BackgroundProcess host1(agent(1), dir / "host1.log");
  const int status0 = host0.wait_exit(120), status1 = host1.wait_exit(120);
  INFO("host 0:\n" << host0.log() << "\nhost 1:\n" << host1.log());
  CHECK(status0 == 0);
  CHECK(status1 == 0);
  CHECK_THAT(host0.log(), Contains("worker 0 of 2 joined (gloo on cpu)"));
  REQUIRE(fs::exists(out + "/model.ckpt-30.pt"));
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(out + "/model.ckpt-30.pt", &meta);
  CHECK(meta.worker_rng_states.size() == 2);
  {
    // bench/README.md's figure: tokens/s of the two hosts against one
    // process with the same total batch (2 x 512 tokens), steps 20 to 30.
    const auto rate = [](const std::string& log) {
      static const std::regex re("step 30: loss [^,]+, lr [^,]+, (\\d+) tokens/s");
      std::smatch m;
      return std::regex_search(log, m, re) ? std::stod(m[1]) : 0.0;
    };
    std::string flags = t2t::test::tiny_trainer_flags(data, dir / "one") + " --train_steps=30";
    flags.replace(flags.find("batch_size=512"), 14, "batch_size=1024");
    const auto one = run_command("./t2t-trainer " + flags);
    REQUIRE(one.exit_code == 0);
    std::cout << "figure: two hosts (one worker, one thread each, batch 512 per worker) "
              << rate(host0.log()) << " tokens/s; one host (one thread, batch 1024) "
              << rate(one.output) << " tokens/s" << std::endl;
  }

  // torchrun's c10d rendezvous: where the machines' hostnames do not
  // resolve to their addresses on the link (here, as in most containers,
  // they resolve to the loopback), the agent on the endpoint's host must be
  // told it hosts the store (--rdzv_conf=is_host=1), and every agent its own
  // address (--local_addr), which it hands its workers as MASTER_ADDR.
  const std::string rdzv = dir / "rdzv";
  const auto rdzv_agent = [&](int host) {
    return hosts.in(host, launcher + " --nnodes=2 --nproc_per_node=1 --rdzv_backend=c10d"
                              " --rdzv_endpoint=" + hosts.address(0) + ":29519 --rdzv_id=t2t" +
                              (host == 0 ? " --rdzv_conf=is_host=1" : "") +
                              " --local_addr=" + hosts.address(host) + trainer + "_rdzv");
  };
  t2t::test::BackgroundProcess rdzv0(rdzv_agent(0), dir / "rdzv0.log");
  t2t::test::BackgroundProcess rdzv1(rdzv_agent(1), dir / "rdzv1.log");
  const int rdzv_status0 = rdzv0.wait_exit(120), rdzv_status1 = rdzv1.wait_exit(120);
  INFO("rendezvous host 0:\n" << rdzv0.log() << "\nrendezvous host 1:\n" << rdzv1.log());
  CHECK(rdzv_status0 == 0);
  CHECK(rdzv_status1 == 0);
  CHECK(fs::exists(out + "_rdzv/model.ckpt-30.pt"));

  // An --output_dir the hosts do not share (host 1 sees a tmpfs of its own
  // there, in a mount namespace of its own): refused at start, by both.
  const std::string outs = dir / "outs";
  fs::create_directories(outs);
  const auto unshared_agent = [&](int host) {
    const std::string run = launcher + " --nnodes=2 --nproc_per_node=1 --node_rank=" +
                            std::to_string(host) + " --master_addr=" + hosts.address(0) +
                            " --master_port=29521" + trainer_at + outs + "/run";
    return host == 0 ? hosts.in(0, run)
                     : hosts.in(1, "unshare -m sh -c \"mount -t tmpfs tmpfs '" + outs +
                                       "' && exec " + run + "\"");
  };
  t2t::test::BackgroundProcess apart0(unshared_agent(0), dir / "apart0.log");
  t2t::test::BackgroundProcess apart1(unshared_agent(1), dir / "apart1.log");
  const int apart_status0 = apart0.wait_exit(120), apart_status1 = apart1.wait_exit(120);
  INFO("unshared host 0:\n" << apart0.log() << "\nunshared host 1:\n" << apart1.log());
  CHECK(apart_status0 != 0);
  CHECK(apart_status1 != 0);
  CHECK_THAT(apart0.log(), Contains("is not one directory that every worker sees: worker 1 (host") &&
                               Contains("finds no " + outs + "/run/.t2t-shared-check"));
  CHECK_FALSE(fs::exists(outs + "/run/model.ckpt-30.pt"));

  // GLOO_SOCKET_IFNAME names the interface; a wrong one is one clear line.
  const std::string bad = dir / "bad";
  const auto bad_agent = [&](int host) {
    return hosts.in(host, "env GLOO_SOCKET_IFNAME=nosuch0 " + launcher +
                              " --nnodes=2 --nproc_per_node=1 --node_rank=" +
                              std::to_string(host) + " --master_addr=" + hosts.address(0) +
                              " --master_port=29518" + trainer + "_bad");
  };
  t2t::test::BackgroundProcess bad0(bad_agent(0), dir / "bad0.log");
  t2t::test::BackgroundProcess bad1(bad_agent(1), dir / "bad1.log");
  const int bad_status0 = bad0.wait_exit(120), bad_status1 = bad1.wait_exit(120);
  INFO("bad host 0:\n" << bad0.log());
  CHECK(bad_status0 != 0);
  CHECK(bad_status1 != 0);
  CHECK_THAT(bad0.log(), Contains("Gloo cannot use GLOO_SOCKET_IFNAME=nosuch0") &&
                             Contains("ip -brief addr"));
  CHECK_THAT(bad0.log(), !Contains("frame #0"));
}
