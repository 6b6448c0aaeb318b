// t2t-serve's page at / in a real browser: headless Chromium (Debian's
// chromium, which tools/setup.sh installs) opens it on a loopback server,
// translates, and the drawn result is checked against the JSON API's own
// answer to the same request. Skipped where no chromium is installed.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "t2t/core/file_util.h"
#include "tests/support/sample_run.h"
#include "tests/support/serve_process.h"
#include "tests/support/test_util.h"

using nlohmann::json;
using t2t::test::run_command;
using t2t::test::SampleRun;
using t2t::test::trained_sample_run;
using t2t::test::ServeProcess;
using t2t::test::TempDir;

namespace {

const SampleRun& trained() { return trained_sample_run("web_page_model"); }

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const auto r = run_command(std::string("command -v ") + name);
    if (r.exit_code == 0) return name;
  }
  return "";
}

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The page's DOM once its scripts are done (the network waits are part of
// the virtual time budget's pauses).
std::string rendered_dom(const std::string& browser, const std::string& url, const TempDir& dir) {
  const auto r = run_command(browser + " --headless=new --no-sandbox --disable-gpu "
                             "--no-first-run --user-data-dir=" + (dir / "profile") +
                             " --virtual-time-budget=60000 --dump-dom '" + url + "' 2>/dev/null");
  return r.output;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> texts_of(const std::string& dom, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex re("class=\"" + cls + "\"[^>]*>([^<]*)<");
  for (std::sregex_iterator it(dom.begin(), dom.end(), re), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("the page at / translates in a browser and draws the server's alignment",
          "[serve][e2e][browser]") {
  const std::string browser = chromium();
  if (browser.empty()) T2T_SKIP("no chromium to run the page in (tools/setup.sh installs it)");
  const auto& t = trained();
  TempDir dir("web_page");
  ServeProcess server(t.model_flags() + " --decode_hparams='beam_size=4,extra_length=5' "
                      "--threads=2", dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());

  // The page itself: HTML, inline only.
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(120, 0);
  auto page = client.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK_THAT(page->get_header_value("Content-Type"), Catch::Contains("text/html"));
  CHECK_THAT(page->get_header_value("Content-Security-Policy"), Catch::Contains("default-src 'none'"));
  for (const char* external : {"src=", "href=", "url(", "@import"})
    CHECK(page->body.find(external) == std::string::npos);

  const std::vector<std::string> texts = {"I like music.", "Where is the station?"};
  const std::string glossary = "music => 电影";
  const std::string dom =
      rendered_dom(browser, base + "/?n_best=2&beam_size=4&text=" + url_encode(texts[0] + "\n" + texts[1]) +
                                "&glossary=" + url_encode(glossary), dir);
  INFO(dom);
  REQUIRE(dom.find("data-state=\"done\"") != std::string::npos);

  // The same request through the API.
  const json body = {{"text", texts}, {"beam_size", 4}, {"n_best", 2}, {"alignment", true},
                     {"glossary", json::array({json::array({"music", "电影"})})}};
  auto res = client.Post("/v1/translate", body.dump(), "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const json answer = json::parse(res->body);
  INFO(answer.dump());

  const auto shown = texts_of(dom, "translation");
  REQUIRE(shown.size() == 2);
  for (size_t k = 0; k < 2; ++k) CHECK(shown[k] == answer["translations"][k][0].get<std::string>());
  CHECK(shown[0].find("电影") != std::string::npos);  // the glossary's term
  CHECK(count(dom, "class=\"hyp\"") ==
        static_cast<int>(answer["translations"][0].size() + answer["translations"][1].size()));
  CHECK(count(dom, "class=\"score\"") == count(dom, "class=\"hyp\""));
  CHECK(texts_of(dom, "met").size() == 1);

  // One drawn line per hard link of each best hypothesis, between its words.
  size_t links = 0;
  for (size_t k = 0; k < 2; ++k) links += answer["alignments"][k][0]["hard"].size();
  CHECK(count(dom, "<line class=\"link\"") == static_cast<int>(links));
  CHECK(texts_of(dom, "src-word").size() ==
        answer["alignments"][0][0]["source_words"].size() +
            answer["alignments"][1][0]["source_words"].size());
  CHECK(texts_of(dom, "tgt-word").size() ==
        answer["alignments"][0][0]["target_words"].size() +
            answer["alignments"][1][0]["target_words"].size());
  CHECK(server.stop() == 0);
}

TEST_CASE("with API keys the page needs ?key= and sends it on", "[serve][e2e][browser]") {
  const std::string browser = chromium();
  if (browser.empty()) T2T_SKIP("no chromium to run the page in (tools/setup.sh installs it)");
  const auto& t = trained();
  TempDir dir("web_page_keys");
  t2t::write_file_atomic(dir / "keys", "k3y-for-page\n");
  ServeProcess server(t.model_flags() + " --decode_hparams='beam_size=2,extra_length=5' "
                      "--threads=2 --api_key_file=" + (dir / "keys"), dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  httplib::Client client("127.0.0.1", server.port());
  auto none = client.Get("/");
  REQUIRE(none);
  CHECK(none->status == 401);
  CHECK_THAT(none->body, Catch::Contains("?key="));
  auto wrong = client.Get("/?key=nope");
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  auto right = client.Get("/?key=k3y-for-page");
  REQUIRE(right);
  CHECK(right->status == 200);

  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  const std::string dom = rendered_dom(browser, base + "/?key=k3y-for-page&text=Hello.", dir);
  INFO(dom);
  CHECK(dom.find("data-state=\"done\"") != std::string::npos);
  CHECK(texts_of(dom, "translation").size() == 1);
  const std::string refused = rendered_dom(browser, base + "/?text=Hello.", dir);
  CHECK(refused.find("API key") != std::string::npos);
  CHECK(refused.find("class=\"translation\"") == std::string::npos);
  CHECK(server.stop() == 0);
}
