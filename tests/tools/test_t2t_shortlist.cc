// t2t-shortlist end to end on the bundled sample: a shortlist counted from
// the training shards, converted between vmap, Marian's format and <id_N>
// names, and decoded with by t2t-decoder (--shortlist) and t2t-serve, with
// the errors a user meets.
#include <catch2/catch.hpp>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "tests/support/sample_run.h"
#include "tests/support/serve_process.h"
#include "tests/support/test_util.h"

using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::SampleRun;
using t2t::test::trained_sample_run;
using t2t::test::TempDir;

namespace {

const SampleRun& trained() { return trained_sample_run("shortlist_e2e"); }

std::string shortlist_tool(const SampleRun& t, const std::string& extra) {
  return "./t2t-shortlist --problem=translate_enzh_sample --data_dir=" + t.data + " " + extra;
}

const char kSource[] =
    "I like music.\nHello.\nWhere is the station?\n\nTom is my friend.\nIt is raining today.\n";

// Decodes kSource with `flags`; the output lines.
std::vector<std::string> decode(const SampleRun& t, const TempDir& dir, const std::string& flags,
                                std::string* log = nullptr) {
  const std::string in = dir / "in.en", out = dir / "out.zh";
  t2t::write_file_atomic(in, kSource);
  const auto r = run_command(t.decoder("--decode_hparams=beam_size=4 --threads=2 "
                                       "--decode_from_file=" + in + " --decode_to_file=" + out +
                                       " " + flags));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  if (log) *log = r.output;
  return read_lines(out);
}

}  // namespace

TEST_CASE("t2t-shortlist counts the shards and t2t-decoder decodes with the shortlist",
          "[shortlist][e2e]") {
  const auto& t = trained();
  TempDir dir("shortlist_decode");
  const std::string vmap = dir / "shortlist.vmap";
  auto r = run_command(shortlist_tool(t, "--output=" + vmap + " --best=8 --frequent=30"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("counted") && Catch::Contains("wrote " + vmap));
  const auto lines = read_lines(vmap);
  REQUIRE(lines.size() > 20);
  CHECK(lines[0][0] == '\t');  // the always-allowed targets first
  CHECK(t2t::split(lines[0].substr(1), ' ').size() == 30);
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto tab = lines[i].find('\t');
    REQUIRE(tab != std::string::npos);
    CHECK(t2t::split(lines[i].substr(tab + 1), ' ').size() <= 8);
  }

  const auto plain = decode(t, dir, "");
  std::string log;
  const auto narrow = decode(t, dir, "--shortlist=" + vmap + " --shortlist_best=2", &log);
  CHECK_THAT(log, Catch::Contains("shortlist " + vmap) &&
                      Catch::Contains("target ids per batch on average"));
  REQUIRE(narrow.size() == plain.size());
  CHECK(narrow[3].empty());
  // A shortlist allowing every target always is no restriction at all.
  const std::string every = dir / "every.vmap";
  r = run_command(shortlist_tool(t, "--output=" + every + " --frequent=100000"));
  REQUIRE(r.exit_code == 0);
  CHECK(decode(t, dir, "--shortlist=" + every) == plain);

  // Named by <id_N>, the same shortlist decodes the same; a relative name
  // is found in the model directory.
  const std::string ids = t.run + "/shortlist_ids.vmap";
  r = run_command(shortlist_tool(t, "--input=" + vmap + " --output=" + ids + " --tokens=ids"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(read_lines(ids)[0], Catch::StartsWith("\t<id_"));
  CHECK(decode(t, dir, "--shortlist=shortlist_ids.vmap --shortlist_best=2") == narrow);
}

TEST_CASE("t2t-shortlist converts between vmap and Marian's format", "[shortlist][e2e]") {
  const auto& t = trained();
  TempDir dir("shortlist_convert");
  const std::string vmap = dir / "a.vmap", lex = dir / "lex.s2t", back = dir / "b.vmap";
  REQUIRE(run_command(shortlist_tool(t, "--output=" + vmap + " --best=5 --frequent=10 "
                                        "--tokens=ids")).exit_code == 0);
  auto r = run_command(shortlist_tool(t, "--input=" + vmap + " --output=" + lex +
                                         " --format=marian --tokens=ids"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto marian = read_lines(lex);
  REQUIRE(!marian.empty());
  CHECK(t2t::split(marian[0], ' ').size() == 3);
  r = run_command(shortlist_tool(t, "--input=" + lex + " --output=" + back +
                                     " --frequent=10 --tokens=ids"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // The per-token lists come back whole and in order; Marian's always-allowed
  // targets are the vocabulary's first 10 ids.
  auto entries = [](const std::vector<std::string>& lines) {
    std::vector<std::string> out(lines.begin() + 1, lines.end());
    return out;
  };
  CHECK(entries(read_lines(back)) == entries(read_lines(vmap)));
  CHECK(read_lines(back)[0] == "\t<id_0> <id_1> <id_2> <id_3> <id_4> <id_5> <id_6> <id_7> "
                               "<id_8> <id_9>");
}

TEST_CASE("t2t-shortlist and t2t-decoder --shortlist explain what is wrong", "[shortlist][e2e]") {
  const auto& t = trained();
  TempDir dir("shortlist_errors");
  auto r = run_command(shortlist_tool(t, "--output=" + (dir / "x.vmap") + " --best=0"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--best=0: give a count >= 1"));
  r = run_command(shortlist_tool(t, "--output=" + (dir / "x.vmap") + " --format=json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--format=json is not a shortlist format"));
  r = run_command("./t2t-shortlist --problem=translate_enzh_sample --data_dir=" +
                  (dir / "empty") + " --output=" + (dir / "x.vmap"));
  CHECK(r.exit_code != 0);
  r = run_command(t.decoder("--decode_from_file=/dev/null --shortlist_best=3"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--shortlist_best goes with --shortlist"));
  r = run_command(t.decoder("--decode_from_file=/dev/null --shortlist=nowhere.vmap"));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("--shortlist=nowhere.vmap: no such file, here or in the "
                                       "model directory"));
  t2t::write_file_atomic(dir / "other.vmap", "\tzz yy\nqq\tzz\n");
  r = run_command(t.decoder("--decode_from_file=/dev/null --shortlist=" + (dir / "other.vmap")));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("holds no token of these vocabularies"));
  t2t::write_file_atomic(dir / "bad.txt", "just words here and more\n");
  r = run_command(t.decoder("--decode_from_file=/dev/null --shortlist=" + (dir / "bad.txt")));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Catch::Contains("not a shortlist"));
}

TEST_CASE("t2t-serve reads its shortlist once: a checkpoint reload keeps it",
          "[shortlist][serve][e2e]") {
  const auto& t = trained();
  TempDir dir("shortlist_reload");
  const std::string vmap = dir / "shortlist.vmap";
  REQUIRE(run_command(shortlist_tool(t, "--output=" + vmap + " --best=8 --frequent=30"))
              .exit_code == 0);
  t2t::test::ServeProcess server(t.model_flags() + " --shortlist=" + vmap, dir / "serve.log");
  INFO(server.log());
  REQUIRE(server.ok());
  // It depends on the vocabularies only, which a reload keeps: a reload
  // that read it again would fail now.
  std::filesystem::remove(vmap);
  const auto more = run_command(t.trainer("--train_steps=30"));
  INFO(more.output);
  REQUIRE(more.exit_code == 0);
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(120, 0);
  const auto reloaded = client.Post("/v1/reload", "{}", "application/json");
  REQUIRE(reloaded);
  CHECK(reloaded->status == 200);
  CHECK(nlohmann::json::parse(reloaded->body).value("model_step", 0) == 30);
  const auto translated =
      client.Post("/v1/translate", R"({"text": ["I like music."]})", "application/json");
  REQUIRE(translated);
  CHECK(translated->status == 200);
  CHECK(server.stop() == 0);
  const std::string log = server.log();
  const std::string read_line = "shortlist " + vmap + ":";
  CHECK(log.find(read_line) != std::string::npos);
  CHECK(log.find(read_line) == log.rfind(read_line));
}
