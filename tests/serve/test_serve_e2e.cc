// End-to-end tests of t2t-serve: the real binary on an ephemeral loopback
// port, a real HTTP client, a briefly trained transformer_tiny. It answers
// as t2t-decoder does, keeps concurrent clients' results apart, refuses
// each kind of bad request with its status, outlives a fuzz loop, reloads
// under load without losing a request, drains on SIGTERM, and enforces
// its API key.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "t2t/core/runtime.h"
#include "t2t/core/file_util.h"
#include "tests/support/sample_run.h"
#include "tests/support/serve_process.h"
#include "tests/support/t2t_fixture.h"
#include "tests/support/test_util.h"

using nlohmann::json;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::SampleRun;
using t2t::test::trained_sample_run;
using t2t::test::ServeProcess;
using t2t::test::TempDir;

namespace {

// Short decodes: the 20-step model rarely ends a sentence by itself.
const std::string kDecode = "--decode_hparams='beam_size=2,extra_length=5'";

const SampleRun& trained() { return trained_sample_run("serve_e2e"); }

std::vector<std::string> dev_lines(size_t n) {
  auto lines = read_lines(t2t::test::source_dir() + "/data/sample/dev.en");
  lines.resize(std::min(n, lines.size()));
  return lines;
}

// t2t-decoder's translations of `lines`, the reference for the server's.
std::vector<std::string> decoder_reference(const SampleRun& run, const std::vector<std::string>& lines,
                                           const TempDir& dir, const std::string& extra = "") {
  {
    std::ofstream out(dir / "ref.en");
    for (const auto& l : lines) out << l << "\n";
  }
  const auto r = run_command(run.decoder(kDecode + " --threads=2 " + extra + " --decode_from_file=" +
                                         (dir / "ref.en") + " --decode_to_file=" + (dir / "ref.zh")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_lines(dir / "ref.zh");
}

json texts_body(const std::vector<std::string>& texts, json extra = json::object()) {
  extra["text"] = texts;
  return extra;
}

// POSTs `body` and returns (status, parsed answer); status -1 when the
// connection failed.
std::pair<int, json> post(httplib::Client& client, const std::string& path, const std::string& body) {
  auto res = client.Post(path.c_str(), body, "application/json");
  if (!res) return {-1, json()};
  return {res->status, json::parse(res->body, nullptr, false)};
}

std::pair<int, json> post(int port, const std::string& path, const json& body) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  return post(client, path, body.dump());
}

// A value of the server's /metrics, or -1.
double metric(int port, const std::string& name) {
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/metrics");
  if (!res) return -1;
  const std::string& text = res->body;
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

std::string server_flags(const SampleRun& run, const std::string& extra) {
  return run.model_flags() + " " + kDecode + " --threads=2 " + extra;
}

}  // namespace

TEST_CASE("t2t-serve translates as t2t-decoder does, and reports health, readiness and metrics",
          "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_same");
  const auto lines = dev_lines(40);
  const auto reference = decoder_reference(t, lines, dir);
  REQUIRE(reference.size() == lines.size());

  ServeProcess server(server_flags(t, ""), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());

  auto [status, answer] = post(server.port(), "/v1/translate", texts_body(lines));
  REQUIRE(status == 200);
  CHECK(answer["translations"].get<std::vector<std::string>>() == reference);
  CHECK(answer["scores"].size() == lines.size());
  CHECK(answer["model_step"] == 20);

  // One at a time, and with several hypotheses: the best is the same.
  for (size_t i = 0; i < 4; ++i) {
    auto [s1, one] = post(server.port(), "/v1/translate", texts_body({lines[i]}));
    CHECK(s1 == 200);
    CHECK(one["translations"][0] == reference[i]);
    auto [s2, two] = post(server.port(), "/v1/translate", texts_body({lines[i]}, {{"n_best", 2}}));
    CHECK(s2 == 200);
    REQUIRE(two["translations"][0].is_array());
    CHECK(two["translations"][0].size() <= 2);
    CHECK(two["translations"][0][0] == reference[i]);
    CHECK(two["scores"][0].size() == two["translations"][0].size());
  }
  // An empty line is answered with an empty line, as t2t-decoder does.
  auto [s3, blank] = post(server.port(), "/v1/translate", texts_body({"", "  "}));
  CHECK(s3 == 200);
  CHECK(blank["translations"] == json({"", ""}));

  httplib::Client client("127.0.0.1", server.port());
  auto health = client.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  auto ready = client.Get("/ready");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  CHECK(json::parse(ready->body)["model_step"] == 20);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->get_header_value("Content-Type").find("text/plain") == 0);
  CHECK(metric(server.port(), "t2t_translated_sentences_total") == 40 + 8);
  CHECK(metric(server.port(), "t2t_model_step") == 20);
  CHECK_THAT(metrics->body,
             Catch::Contains("t2t_http_requests_total{path=\"/v1/translate\",code=\"200\"} 10"));

  CHECK(server.stop() == 0);
  const std::string log = server.log();
  CHECK_THAT(log, Catch::Contains("ready: ") && Catch::Contains("stopped after"));
#if !defined(__SANITIZE_THREAD__)  // serve_process.h: no warm-up there
  CHECK_THAT(log, Catch::Contains("warmed up on synthetic batches"));
#endif
  // Without --log_requests no text reaches the log.
  CHECK_THAT(log, !Catch::Contains(lines[0]));
}

TEST_CASE("t2t-serve --quantize=int8 translates as t2t-decoder --quantize=int8 does",
          "[serve][e2e][int8]") {
  const auto& t = trained();
  TempDir dir("serve_int8");
  const auto lines = dev_lines(24);
  const auto reference = decoder_reference(t, lines, dir, "--quantize=int8");
  REQUIRE(reference.size() == lines.size());
  ServeProcess server(server_flags(t, "--quantize=int8"), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  auto [status, answer] = post(server.port(), "/v1/translate", texts_body(lines));
  REQUIRE(status == 200);
  CHECK(answer["translations"].get<std::vector<std::string>>() == reference);
  CHECK_THAT(server.log(), Catch::Contains("int8 weights"));
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve --warm_up=false is ready once the model is loaded", "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_cold");
  const auto lines = dev_lines(4);
  const auto reference = decoder_reference(t, lines, dir);
  ServeProcess server(server_flags(t, "--warm_up=false"), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  auto [status, answer] = post(server.port(), "/v1/translate", texts_body(lines));
  REQUIRE(status == 200);
  CHECK(answer["translations"].get<std::vector<std::string>>() == reference);
  CHECK_THAT(server.log(), !Catch::Contains("warmed up"));
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve on CUDA translates as t2t-decoder on CUDA does", "[serve][e2e][cuda]") {
  if (t2t::cuda_device_count() == 0) T2T_SKIP("no CUDA device");
  const auto& t = trained();
  TempDir dir("serve_cuda");
  const auto lines = dev_lines(40);
  const auto reference = decoder_reference(t, lines, dir, "--device=cuda");
  REQUIRE(reference.size() == lines.size());
  ServeProcess server(server_flags(t, "--device=cuda --max_batch_delay_ms=20"), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  CHECK_THAT(server.log(), Catch::Contains("1 decoding at once"));
  // Concurrent one-sentence requests, batched on the one GPU worker.
  std::vector<std::string> got(lines.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < lines.size(); ++i)
    clients.emplace_back([&, i] {
      auto [status, answer] = post(server.port(), "/v1/translate", texts_body({lines[i]}));
      if (status == 200) got[i] = answer["translations"][0].get<std::string>();
    });
  for (auto& c : clients) c.join();
  // On a GPU the kernels are picked per batch shape and may round a near
  // tie of this barely trained model the other way: nearly all, not all.
  size_t same = 0, answered = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    same += got[i] == reference[i];
    answered += !got[i].empty() || reference[i].empty();
  }
  // The log as it stands after the server ended, so that a crash says why.
  const int stopped = server.stop();
  INFO("the server's log after it ended:\n" << server.log());
  CHECK(answered == lines.size());
  CHECK(same >= lines.size() * 9 / 10);
  CHECK(stopped == 0);
}

TEST_CASE("32 concurrent clients each get their own translations, in order", "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_concurrent");
  const auto lines = dev_lines(96);
  const auto reference = decoder_reference(t, lines, dir);
  REQUIRE(reference.size() == lines.size());
  // A longer delay, so that the clients' sentences share batches.
  ServeProcess server(server_flags(t, "--max_batch_delay_ms=30"), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());

  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int k = 0; k < 32; ++k) {
    clients.emplace_back([&, k] {
      httplib::Client client("127.0.0.1", server.port());
      client.set_read_timeout(120, 0);
      for (int round = 0; round < 3; ++round) {
        std::vector<size_t> picked;
        for (int j = 0; j < 3; ++j) picked.push_back((k * 3 + j + round * 7) % lines.size());
        std::vector<std::string> texts;
        for (size_t i : picked) texts.push_back(lines[i]);
        auto [status, answer] = post(client, "/v1/translate", texts_body(texts).dump());
        std::lock_guard<std::mutex> lock(mutex);
        if (status != 200) {
          failures.push_back("client " + std::to_string(k) + ": status " + std::to_string(status));
          continue;
        }
        for (size_t j = 0; j < picked.size(); ++j)
          if (answer["translations"][j] != reference[picked[j]])
            failures.push_back("client " + std::to_string(k) + " got another translation of " +
                               lines[picked[j]]);
      }
    });
  }
  for (auto& c : clients) c.join();
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  // Batching happened: fewer batches than sentences.
  const double sentences = metric(server.port(), "t2t_batch_sentences_sum");
  const double batches = metric(server.port(), "t2t_batch_sentences_count");
  CHECK(sentences == 32 * 3 * 3);
  CHECK(batches < sentences / 2);
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve answers each kind of bad request with its status and what is wrong",
          "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_bad");
  ServeProcess server(server_flags(t, "--max_request_sentences=4 --max_queue=4 "
                                      "--max_input_tokens=20 --max_request_bytes=4000 "
                                      "--max_beam_size=4 --max_batch_size=64 "
                                      "--max_batch_delay_ms=1500 --batch_quiet_ms=0"),
                      dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60, 0);

  const std::string long_sentence = [] {
    std::string s;
    for (int i = 0; i < 60; ++i) s += "word ";
    return s;
  }();
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"{\"text\": [\"a\"", 400, "not valid JSON"},
      {"{\"text\": [\"caf\xe9\"]}", 400, "UTF-8"},
      {"{\"text\": [\"a\"], \"beam\": 2}", 400, "unknown field \"beam\""},
      {"{\"text\": [3]}", 400, "\"text\"[0] must be a string"},
      {"{\"text\": [\"a\"], \"beam_size\": 5}", 400, "between 1 and 4"},
      {"{\"text\": [\"a\", \"b\", \"c\", \"d\", \"e\"]}", 413, "--max_request_sentences"},
      {json{{"text", {long_sentence}}}.dump(), 413, "--max_input_tokens=20"},
      {json{{"text", {std::string(5000, 'a')}}}.dump(), 413, "--max_request_bytes"},
  };
  for (const auto& [body, status, words] : cases) {
    INFO(body.substr(0, 200));
    auto res = client.Post("/v1/translate", body, "application/json");
    REQUIRE(res);
    CHECK(res->status == status);
    const json answer = json::parse(res->body, nullptr, false);
    REQUIRE(answer.is_object());
    CHECK_THAT(answer.value("error", ""), Catch::Contains(words));
  }
  auto missing = client.Get("/v1/nothing");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK_THAT(missing->body, Catch::Contains("POST /v1/translate"));
  auto wrong_method = client.Get("/v1/translate");
  REQUIRE(wrong_method);
  CHECK(wrong_method->status == 405);
  CHECK(post(client, "/v1/reload", "{\"checkpoint\": \"/etc/passwd\"}").first == 400);

  // A full queue: 3 sentences wait out the 1.5 s delay; 2 more do not fit
  // in --max_queue=4 and are refused at once with Retry-After.
  // Catch's assertions are the main thread's only: the client's status is
  // checked after the join.
  int first_status = 0;
  std::thread first([&] {
    first_status = post(server.port(), "/v1/translate", texts_body({"a", "b", "c"})).first;
  });
  for (int i = 0; i < 200 && metric(server.port(), "t2t_queue_sentences") < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto full = client.Post("/v1/translate", texts_body({"d", "e"}).dump(), "application/json");
  first.join();  // before any REQUIRE can leave this scope with the thread running
  CHECK(first_status == 200);
  REQUIRE(full);
  CHECK(full->status == 503);
  CHECK(full->get_header_value("Retry-After") == "1");
  CHECK_THAT(full->body, Catch::Contains("--max_queue=4"));
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve outlives thousands of random and mutated requests", "[serve][e2e][fuzz]") {
  const auto& t = trained();
  TempDir dir("serve_fuzz");
  ServeProcess server(server_flags(t, "--max_request_sentences=8 --max_input_tokens=64 "
                                      "--max_request_bytes=20000 --max_batch_delay_ms=1"),
                      dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  const std::vector<std::string> seeds = {
      R"({"text": ["Hello there.", "How are you?"]})",
      R"({"text": ["Good morning."], "beam_size": 2, "alpha": 0.6, "n_best": 2})",
      R"({"text": ["", "Tom is here."], "beam_size": 1})",
      R"({"text": ["\u4f60\u597d \ud83d\ude00 \"quoted\" \\ back"]})",
  };
  const std::string alphabet = "{}[]\":,.0123456789-+eE truefalsnul\\u\xff\xc3\x80\x00\n";
  std::atomic<int> sent{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int k = 0; k < 4; ++k) {
    clients.emplace_back([&, k] {
      std::mt19937 rng(1234 + k);
      httplib::Client client("127.0.0.1", server.port());
      client.set_read_timeout(60, 0);
      for (int i = 0; i < 750; ++i) {
        std::string body = seeds[rng() % seeds.size()];
        switch (rng() % 5) {
          case 0:  // random bytes
            body.assign(rng() % 300, '\0');
            for (char& c : body) c = static_cast<char>(rng());
            break;
          case 1:  // a few bytes changed
            for (int m = 1 + rng() % 4; m > 0; --m)
              body[rng() % body.size()] = alphabet[rng() % alphabet.size()];
            break;
          case 2:  // cut short
            body.resize(rng() % body.size());
            break;
          case 3:  // a run of structure inserted
            body.insert(rng() % body.size(), std::string(1 + rng() % 3000, "[{\""[rng() % 3]));
            break;
          default:  // bytes inserted
            for (int m = 1 + rng() % 8; m > 0; --m)
              body.insert(body.begin() + rng() % body.size(), alphabet[rng() % alphabet.size()]);
        }
        auto res = client.Post("/v1/translate", body, "application/json");
        ++sent;
        const int status = res ? res->status : -1;
        if (status != 200 && status != 400 && status != 413) {
          std::lock_guard<std::mutex> lock(mutex);
          failures.push_back("status " + std::to_string(status) + " for body " +
                             json(body).dump(-1, ' ', true, json::error_handler_t::replace));
        }
      }
    });
  }
  // Bytes that are not HTTP at all, on raw connections.
  std::mt19937 rng(99);
  for (int i = 0; i < 50; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      std::string junk(1 + rng() % 2000, '\0');
      for (char& c : junk) c = static_cast<char>(rng());
      if (i % 2) junk = "POST /v1/translate HTTP/1.1\r\nContent-Length: 99999\r\n\r\n" + junk;
      [[maybe_unused]] auto n = ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    }
    ::close(fd);
  }
  for (auto& c : clients) c.join();
  CHECK(sent == 3000);
  for (size_t i = 0; i < std::min<size_t>(failures.size(), 10); ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
  // Still alive and answering.
  auto [status, answer] = post(server.port(), "/v1/translate", texts_body({"Hello."}));
  CHECK(status == 200);
  CHECK(server.exited() < 0);
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve reloads a newer checkpoint under load and keeps serving through a bad one",
          "[serve][e2e]") {
  SampleRun t("serve_reload");  // its own run: this test trains it further
  INFO(t.log);
  REQUIRE(t.ok);
  TempDir dir("serve_reload_logs");
  ServeProcess server(server_flags(t, ""), dir / "serve.log");
  ServeProcess watcher(server_flags(t, "--watch_checkpoints=0.2"), dir / "watch.log");
  INFO(server.log());
  REQUIRE(server.ok());
  REQUIRE(watcher.ok());

  // Clients translate without pause through the reloads.
  std::atomic<bool> done{false};
  std::atomic<int> answered{0}, newer{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  const auto lines = dev_lines(16);
  for (int k = 0; k < 6; ++k) {
    clients.emplace_back([&, k] {
      httplib::Client client("127.0.0.1", server.port());
      client.set_read_timeout(120, 0);
      for (int i = 0; !done; ++i) {
        auto [status, answer] = post(
            client, "/v1/translate",
            texts_body({lines[(k + i) % lines.size()], lines[(k + i + 1) % lines.size()]}).dump());
        if (status != 200) {
          std::lock_guard<std::mutex> lock(mutex);
          failures.push_back("status " + std::to_string(status) + ": " + answer.dump());
          continue;
        }
        ++answered;
        if (answer["model_step"] == 30) ++newer;
      }
    });
  }
  auto trained_more = run_command(t.trainer("--train_steps=30"));
  INFO(trained_more.output);
  REQUIRE(trained_more.exit_code == 0);

  auto [status, reloaded] = post(server.port(), "/v1/reload", json::object());
  CHECK(status == 200);
  CHECK(reloaded["reloaded"] == true);
  CHECK(reloaded["model_step"] == 30);
  CHECK(reloaded["previous_step"] == 20);
  const int before = answered;
  for (int i = 0; i < 500 && answered < before + 20; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto [again_status, again] = post(server.port(), "/v1/reload", json::object());
  CHECK(again_status == 200);
  CHECK(again["reloaded"] == false);

  // --watch_checkpoints found the new one by itself.
  double watched = -1;
  for (int i = 0; i < 300 && (watched = metric(watcher.port(), "t2t_model_step")) != 30; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(watched == 30);

  // A checkpoint that does not load leaves the serving one in place.
  { std::ofstream(t.run + "/model.ckpt-40.pt") << "not a checkpoint"; }
  { std::ofstream(t.run + "/checkpoint") << "model.ckpt-40.pt\n"; }
  auto [bad_status, bad] = post(server.port(), "/v1/reload", json::object());
  CHECK(bad_status == 500);
  CHECK_THAT(bad.value("error", ""),
             Catch::Contains("model.ckpt-40.pt") && Catch::Contains("still serving"));
  done = true;
  for (auto& c : clients) c.join();
  for (size_t i = 0; i < std::min<size_t>(failures.size(), 10); ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
  CHECK(answered > 20);
  CHECK(newer > 0);
  auto [after_status, after] = post(server.port(), "/v1/translate", texts_body({"Hello."}));
  CHECK(after_status == 200);
  CHECK(after["model_step"] == 30);
  CHECK(metric(server.port(), "t2t_model_step") == 30);
  CHECK(server.stop() == 0);
  CHECK(watcher.stop() == 0);
  CHECK_THAT(watcher.log(), Catch::Contains("--watch_checkpoints:"));
}

TEST_CASE("SIGTERM during load finishes the queued requests and exits 0", "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_drain");
  // Requests pile up: each batch waits 400 ms for company.
  ServeProcess server(server_flags(t, "--max_batch_delay_ms=400 --batch_quiet_ms=0 "
                                      "--max_batch_size=64"),
                      dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  const auto lines = dev_lines(32);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int k = 0; k < 16; ++k) {
    clients.emplace_back([&, k] {
      auto [status, answer] =
          post(server.port(), "/v1/translate", texts_body({lines[2 * k], lines[2 * k + 1]}));
      if (status == 200 && answer["translations"].size() == 2) ++ok;
    });
  }
  for (int i = 0; i < 300 && metric(server.port(), "t2t_requests_in_flight") < 16; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(metric(server.port(), "t2t_queue_sentences") > 0);
  CHECK(server.stop(SIGTERM, 60) == 0);
  for (auto& c : clients) c.join();
  CHECK(ok == 16);
  CHECK_THAT(server.log(), Catch::Contains("SIGTERM: taking no new requests"));
  // Gone: nothing listens any more.
  httplib::Client client("127.0.0.1", server.port());
  CHECK_FALSE(client.Get("/health"));
}

TEST_CASE("with --api_key_file every request but the probes needs the key", "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_keys");
  { std::ofstream(dir / "keys") << "s3cret-key\n"; }
  ServeProcess server(server_flags(t, "--api_key_file=" + (dir / "keys")), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  httplib::Client client("127.0.0.1", server.port());
  const std::string body = texts_body({"Hello."}).dump();

  auto none = client.Post("/v1/translate", body, "application/json");
  REQUIRE(none);
  CHECK(none->status == 401);
  CHECK(none->get_header_value("WWW-Authenticate") == "Bearer");
  CHECK_THAT(none->body, Catch::Contains("Authorization: Bearer"));
  auto wrong = client.Post("/v1/translate", {{"Authorization", "Bearer s3cret-kez"}}, body,
                           "application/json");
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  auto right = client.Post("/v1/translate", {{"Authorization", "Bearer s3cret-key"}}, body,
                           "application/json");
  REQUIRE(right);
  CHECK(right->status == 200);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 401);
  auto reload = client.Post("/v1/reload", "", "application/json");
  REQUIRE(reload);
  CHECK(reload->status == 401);
  for (const char* probe : {"/health", "/ready"}) {
    auto res = client.Get(probe);
    REQUIRE(res);
    CHECK(res->status == 200);
  }
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve explains what keeps it from starting", "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_start");
  ServeProcess first(server_flags(t, ""), dir / "first.log");
  REQUIRE(first.ok());
  // `timeout`: a server that failed to exit would hang the test otherwise.
  const std::string serve = "timeout 60 ./t2t-serve " + server_flags(t, "");
  auto r = run_command(serve + " --port=" + std::to_string(first.port()));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("cannot listen on 127.0.0.1:" + std::to_string(first.port())));
  CHECK(first.stop() == 0);

  r = run_command("timeout 60 ./t2t-serve --problem=translate_enzh_sample --model=transformer "
                  "--hparams_set=transformer_tiny --data_dir=" + t.data + " --output_dir=" +
                  (dir / "empty") + " --port=0");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("holds no checkpoint"));
  r = run_command(serve + " --port=0 --max_request_sentences=100 --max_queue=10");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--max_queue"));
  r = run_command("timeout 60 ./t2t-serve " + t.model_flags() +
                  " --port=0 --decode_hparams=return_beams=true");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("n_best"));
  r = run_command(serve + " --port=0 --tmp_dir=/tmp");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--tmp_dir does not apply"));
  r = run_command(serve + " --port=0 --api_key_file=" + (dir / "no-such-file"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--api_key_file=") && Catch::Contains("cannot be read"));
}

TEST_CASE("t2t-serve serves a T2T output directory as t2t-decoder decodes it",
          "[serve][e2e][t2t_import]") {
  // Real T2T's checkpoint and hparams.json (tests/fixtures/t2t_run).
  TempDir dir("serve_t2t_dir");
  const std::string fixture = t2t::test::t2t_fixture_dir();
  // A copy of T2T's output directory, which the test adds a checkpoint to.
  std::filesystem::copy(fixture + "/train", dir / "train");
  const std::string model = t2t::test::t2t_fixture_problem(dir) +
                            " --hparams_set=transformer_tiny --output_dir=" + (dir / "train") +
                            " --decode_hparams='beam_size=2,extra_length=5' --threads=2";
  const auto lines = read_lines(fixture + "/decodes/in.en");
  auto r = run_command("./t2t-decoder " + model + " --decode_from_file=" + fixture +
                       "/decodes/in.en --decode_to_file=" + (dir / "ref.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto reference = read_lines(dir / "ref.zh");
  REQUIRE(reference.size() == lines.size());
  ServeProcess server(model, dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  auto [status, answer] = post(server.port(), "/v1/translate", texts_body(lines));
  REQUIRE(status == 200);
  CHECK(answer["translations"].get<std::vector<std::string>>() == reference);
  CHECK_THAT(server.log(), Catch::Contains("read T2T's TensorFlow checkpoint"));
  // A reload looks among T2T's checkpoints too: this one is still the newest,
  auto [reload_status, reloaded] = post(server.port(), "/v1/reload", json::object());
  INFO(reloaded.dump());
  CHECK(reload_status == 200);
  CHECK(reloaded["reloaded"] == false);
  CHECK(reloaded["model_step"] == 20);
  // until T2T writes another and names it in its `checkpoint` file.
  for (const auto& e : std::filesystem::directory_iterator(dir / "train")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("model.ckpt-20.", 0) == 0)
      std::filesystem::copy_file(e.path(), dir / ("train/model.ckpt-30." + name.substr(14)));
  }
  t2t::test::write_lines(dir / "train/checkpoint",
                         {"model_checkpoint_path: \"model.ckpt-30\"",
                          "all_model_checkpoint_paths: \"model.ckpt-30\""});
  auto [newer_status, newer] = post(server.port(), "/v1/reload", json::object());
  INFO(newer.dump());
  CHECK(newer_status == 200);
  CHECK(newer["reloaded"] == true);
  CHECK_THAT(newer["checkpoint"].get<std::string>(), Catch::EndsWith("model.ckpt-30"));
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve serves T2T's Evolved Transformer as T2T's decoder translates",
          "[serve][e2e][t2t_import]") {
  // The second model goes through the same server: only --model differs.
  TempDir dir("serve_evolved");
  const std::string fixture = t2t::test::source_dir() + "/tests/fixtures/t2t_run_evolved";
  const std::string model = t2t::test::t2t_fixture_problem(dir, "evolved_transformer") +
                            " --hparams_set=evolved_transformer_tiny --output_dir=" + fixture +
                            "/train --decode_hparams='beam_size=1,batch_decode_length=true'"
                            " --threads=2";
  ServeProcess server(model, dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  auto [status, answer] =
      post(server.port(), "/v1/translate", texts_body(read_lines(fixture + "/decodes/in.en")));
  REQUIRE(status == 200);
  CHECK(answer["translations"].get<std::vector<std::string>>() ==
        read_lines(fixture + "/decodes/greedy.zh"));
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve takes prefixes, terms, a glossary and alignments in its JSON",
          "[serve][e2e]") {
  const auto& t = trained();
  TempDir dir("serve_guided");
  t2t::write_file_atomic(dir / "glossary.tsv", "station\t车站\n");
  ServeProcess server(server_flags(t, "--glossary=" + (dir / "glossary.tsv")), dir / "serve.log");
  REQUIRE(server.ok());
  const std::vector<std::string> texts = {"I like music.", "Where is the station?", ""};
  auto [status, answer] = post(server.port(), "/v1/translate",
                               texts_body(texts, {{"beam_size", 4},
                                                  {"prefix", {"", "请问", ""}},
                                                  {"constraints", {{"音乐", "北京"}, json::array(), json::array()}},
                                                  {"alignment", true},
                                                  {"no_repeat_ngram_size", 3}}));
  INFO(answer.dump());
  REQUIRE(status == 200);
  const auto& out = answer["translations"];
  REQUIRE(out.size() == 3);
  const std::string first = out[0], second = out[1];
  CHECK(first.find("音乐") != std::string::npos);
  CHECK(first.find("北京") != std::string::npos);
  CHECK(second.rfind("请问", 0) == 0);
  CHECK(second.find("车站") != std::string::npos);  // the server's glossary
  CHECK(out[2] == "");
  CHECK(answer["constraints"][0] == json({"音乐", "北京"}));
  CHECK(answer["constraints"][1] == json({"车站"}));
  CHECK(answer["constraints_met"][0] == json({true, true}));
  const auto& a = answer["alignments"][0];
  CHECK(a["source_words"] == json({"I", "like", "music", "."}));
  REQUIRE(a["soft"].size() == a["target_words"].size());
  for (const auto& pair : a["hard"]) {
    CHECK(pair[0].get<int64_t>() < 4);
    CHECK(pair[1].get<int64_t>() < static_cast<int64_t>(a["target_words"].size()));
  }
  CHECK(answer["alignments"][2] == json::object());
  // A request-level glossary, and the errors that name the field.
  auto [s2, two] = post(server.port(), "/v1/translate",
                        texts_body({"I like music."},
                                   {{"glossary", json::array({json::array({"music", "电影"})})}}));
  INFO(two.dump());
  REQUIRE(s2 == 200);
  CHECK(two["translations"][0].get<std::string>().find("电影") != std::string::npos);
  auto [s3, bad] = post(server.port(), "/v1/translate",
                        texts_body({"Hello."}, {{"constraints", {{"我", "你", "他", "她"}}}}));
  CHECK(s3 == 400);
  CHECK(bad["error"].get<std::string>().find("\"beam_size\"") != std::string::npos);
  auto [s4, bad2] = post(server.port(), "/v1/translate",
                         texts_body({"Hello.", "Hi."}, {{"prefix", {"我"}}}));
  CHECK(s4 == 400);
  CHECK(bad2["error"].get<std::string>().find("\"prefix\" has 1 entries") != std::string::npos);
}
