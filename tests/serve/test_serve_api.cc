// The server's JSON requests and answers, API keys and metrics text, without
// a server: each kind of bad request gets its status and a message that
// says what is wrong.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "t2t/core/error.h"
#include "t2t/serve/api_keys.h"
#include "t2t/serve/serve_metrics.h"
#include "t2t/serve/translate_api.h"
#include "tests/support/test_util.h"

using t2t::ApiError;
using t2t::parse_translate_request;
using t2t::TranslateLimits;

namespace {

// The status and message parse_translate_request throws for `body`.
std::pair<int, std::string> refusal(const std::string& body, TranslateLimits limits = {}) {
  try {
    parse_translate_request(body, limits);
  } catch (const ApiError& e) {
    return {e.status, e.what()};
  }
  return {200, ""};
}

}  // namespace

TEST_CASE("a translate request takes text and optional search options", "[serve]") {
  const auto r = parse_translate_request(
      R"({"text": ["Hello.", "", "你好"], "beam_size": 2, "alpha": 1, "n_best": 2})", {});
  CHECK(r.texts == std::vector<std::string>{"Hello.", "", "你好"});
  CHECK(r.beam_size == 2);
  CHECK(r.alpha == 1.0);
  CHECK(r.n_best == 2);
  const auto plain = parse_translate_request(R"({"text": ["a"]})", {});
  CHECK_FALSE(plain.beam_size);
  CHECK_FALSE(plain.alpha);
}

TEST_CASE("each kind of bad translate request gets its status and says what is wrong",
          "[serve]") {
  TranslateLimits limits;
  limits.max_request_sentences = 2;
  limits.max_beam_size = 8;
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"{\"text\": [\"a\"", 400, "not valid JSON"},
      {"", 400, "not valid JSON"},
      {"{\"text\": [\"\xff\"]}", 400, "UTF-8"},
      // Found by fuzz/translate_request: a number beyond a double escaped as
      // nlohmann's out_of_range instead of a 400.
      {"{\"text\": [\"a\"], \"alpha\": 1e999}", 400, "number overflow"},
      {"[\"a\"]", 400, "must be a JSON object"},
      {"{}", 400, "\"text\" is missing"},
      {"{\"text\": \"a\"}", 400, "must be an array of strings, got string"},
      {"{\"text\": [1]}", 400, "\"text\"[0] must be a string, got number"},
      {"{\"text\": []}", 400, "\"text\" is empty"},
      {"{\"text\": [\"a\", \"b\", \"c\"]}", 413, "more than this server takes"},
      {"{\"text\": [\"a\"], \"beam\": 2}", 400, "unknown field \"beam\""},
      {"{\"text\": [\"a\"], \"beam_size\": \"4\"}", 400, "must be an integer, got string"},
      {"{\"text\": [\"a\"], \"beam_size\": 4.0}", 400, "must be an integer, got number"},
      {"{\"text\": [\"a\"], \"beam_size\": true}", 400, "must be an integer, got boolean"},
      {"{\"text\": [\"a\"], \"beam_size\": 9}", 400, "between 1 and 8, got 9"},
      {"{\"text\": [\"a\"], \"beam_size\": 0}", 400, "between 1 and 8"},
      {"{\"text\": [\"a\"], \"beam_size\": 18446744073709551615}", 400, "between 1 and 8"},
      {"{\"text\": [\"a\"], \"n_best\": -1}", 400, "between 1 and 8"},
      {"{\"text\": [\"a\"], \"alpha\": -0.5}", 400, "\"alpha\" must be between 0 and 10"},
      {"{\"text\": [\"a\"], \"alpha\": null}", 400, "\"alpha\" must be a number, got null"},
      {"{\"text\": [\"a\"], \"patience\": -1}", 400, "\"patience\" must be between 0"},
      {"{\"text\": [\"a\"], \"patience\": \"2\"}", 400, "\"patience\" must be a number"},
  };
  for (const auto& [body, status, words] : cases) {
    INFO(body);
    const auto [got_status, message] = refusal(body, limits);
    CHECK(got_status == status);
    CHECK_THAT(message, Catch::Contains(words));
  }
}

TEST_CASE("deeply nested JSON is refused without exhausting the stack", "[serve]") {
  const std::string deep = "{\"text\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  CHECK(refusal(deep).first == 400);
}

TEST_CASE("a request's options override the server's search within limits", "[serve]") {
  t2t::SearchOptions server;
  server.beam_size = 4;
  server.alpha = 0.6;
  auto r = parse_translate_request(R"({"text": ["a"], "alpha": 1.5, "n_best": 3})", {});
  const auto search = t2t::request_search(r, server);
  CHECK(search.beam_size == 4);
  CHECK(search.alpha == 1.5);
  CHECK(search.num_return == 3);
  CHECK_FALSE(search.stop_early);  // the lower hypotheses must settle too
  CHECK(t2t::request_search(parse_translate_request(R"({"text": ["a"]})", {}), server).stop_early);
  CHECK(t2t::request_search(parse_translate_request(R"({"text": ["a"]})", {}), server).patience ==
        0);
  CHECK(t2t::request_search(parse_translate_request(R"({"text": ["a"], "patience": 2})", {}),
                            server)
            .patience == 2);
  r.n_best = 5;
  CHECK_THROWS_AS(t2t::request_search(r, server), ApiError);
}

TEST_CASE("answers keep the order of the request and give lists for n_best above 1", "[serve]") {
  const std::vector<t2t::Translation> done = {{{"一", "壹"}, {-1.0, -2.0}}, {{""}, {0.0}}};
  const auto one = nlohmann::json::parse(t2t::translate_response(done, 1, 7));
  CHECK(one["translations"] == nlohmann::json({"一", ""}));
  CHECK(one["scores"] == nlohmann::json({-1.0, 0.0}));
  CHECK(one["model_step"] == 7);
  const auto two = nlohmann::json::parse(t2t::translate_response(done, 2, 7));
  CHECK(two["translations"][0] == nlohmann::json({"一", "壹"}));
  CHECK(two["translations"][1] == nlohmann::json({""}));
  // Bytes that are not UTF-8 are replaced, never a failed answer.
  const std::vector<t2t::Translation> bad = {{{"a\xff"}, {0.0}}};
  CHECK(nlohmann::json::parse(t2t::translate_response(bad, 1, 0))["translations"][0] ==
        "a\xEF\xBF\xBD");
  CHECK(nlohmann::json::parse(t2t::error_body("no"))["error"] == "no");
}

TEST_CASE("API keys: one a line, matched whole, from the Authorization header", "[serve]") {
  t2t::test::TempDir dir("api_keys");
  const std::string path = dir / "keys";
  std::ofstream(path) << "  old-key  \n\nnew-key\n";
  const auto keys = t2t::ApiKeys::from_file(path);
  CHECK(keys.enabled());
  CHECK(keys.allows("Bearer new-key"));
  CHECK(keys.allows("Bearer old-key"));
  CHECK_FALSE(keys.allows("Bearer new-ke"));
  CHECK_FALSE(keys.allows("Bearer new-key2"));
  CHECK_FALSE(keys.allows("new-key"));
  CHECK_FALSE(keys.allows("Basic new-key"));
  CHECK_FALSE(keys.allows(""));
  CHECK(t2t::ApiKeys().allows(""));  // no file: open
  std::ofstream(dir / "empty") << "\n  \n";
  CHECK_THROWS_WITH(t2t::ApiKeys::from_file(dir / "empty"), Catch::Contains("holds no key"));
  CHECK_THROWS_WITH(t2t::ApiKeys::from_file(dir / "missing"),
                    Catch::Contains("api_key_file=") && Catch::Contains("cannot be read"));
}

TEST_CASE("metrics are Prometheus text with cumulative histograms", "[serve]") {
  t2t::ServeMetrics metrics;
  metrics.request_done("/v1/translate", 200);
  metrics.request_done("/v1/translate", 200);
  metrics.request_done("/v1/translate", 413);
  metrics.translate_latency(0.003);
  metrics.translate_latency(0.2);
  metrics.batch_done(3, 30);
  metrics.batch_done(40, 400);
  metrics.reload_done(false);
  const std::string text = metrics.prometheus_text(5, 2, 1200);
  for (const char* line :
       {"t2t_http_requests_total{path=\"/v1/translate\",code=\"200\"} 2\n",
        "t2t_http_requests_total{path=\"/v1/translate\",code=\"413\"} 1\n",
        "t2t_translate_latency_seconds_bucket{le=\"0.0025\"} 0\n",
        "t2t_translate_latency_seconds_bucket{le=\"0.005\"} 1\n",
        "t2t_translate_latency_seconds_bucket{le=\"0.25\"} 2\n",
        "t2t_translate_latency_seconds_bucket{le=\"+Inf\"} 2\n",
        "t2t_translate_latency_seconds_count 2\n", "t2t_batch_sentences_bucket{le=\"4\"} 1\n",
        "t2t_batch_sentences_bucket{le=\"32\"} 1\n", "t2t_batch_sentences_bucket{le=\"64\"} 2\n",
        "t2t_batch_sentences_sum 43\n", "t2t_queue_sentences 5\n", "t2t_requests_in_flight 2\n",
        "t2t_translated_sentences_total 43\n", "t2t_output_tokens_total 430\n",
        "t2t_model_step 1200\n", "t2t_model_reloads_total{result=\"failed\"} 1\n",
        "# TYPE t2t_translate_latency_seconds histogram\n"}) {
    INFO(line);
    CHECK_THAT(text, Catch::Contains(line));
  }
  CHECK_THAT(text, Catch::Contains("t2t_sentences_per_second "));
}
