// t2t-bleu --translations_dir end to end, on a directory of hand-written
// translations named as t2t-translate-all names them: every file scored as
// --translation scores it, in step order; --min_steps; TensorBoard events at
// the right steps with the right tags, and a rerun that resumes; files that
// come while --wait_minutes waits; the flags refused without the directory.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "t2t/io/tfrecord.h"
#include "tests/support/background_process.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;
using t2t::test::write_lines;

namespace {

const std::vector<std::string> kReference = {"the cat sat on the mat", "it is raining today",
                                             "hello world"};

// A translations directory: three steps, given out of order and with 100
// after 20 (a name sort would put it first), and files that are no
// translation: a note, and a translation still being written.
struct Translations {
  TempDir dir;
  std::string ref, tr;
  explicit Translations(const std::string& tag) : dir(tag) {
    ref = dir / "ref.txt";
    tr = dir / "translations";
    write_lines(ref, kReference);
    write_lines(tr + "/p-100", kReference);  // BLEU 100
    write_lines(tr + "/p-20", {"the cat sat on a mat", "it rains today", "hello there world"});
    write_lines(tr + "/p-5", {"The Cat sat on the mat", "it is raining today", "Hello world"});
    write_lines(tr + "/notes.txt", {"not a translation"});
    write_lines(tr + "/p-7.tmp.123.0", {"half", "written"});
  }
  std::string file(int step) const { return tr + "/p-" + std::to_string(step); }
  std::string bleu(const std::string& flags) const {
    return "./t2t-bleu --reference=" + ref + " " + flags;
  }
};

// What --translation prints before each score's details: "BLEU_cased =
// 40.82" (the first three words of each line that starts with BLEU_).
std::vector<std::string> headlines(const std::string& output) {
  std::vector<std::string> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("BLEU_", 0) != 0) continue;
    size_t end = line.find(" = ") + 3;
    while (end < line.size() && line[end] == ' ') ++end;  // T2T's %6.2f pads
    out.push_back(line.substr(0, line.find(' ', end)));
  }
  return out;
}

// The line --translations_dir prints for `path` when it scores as
// --translation does with `flags`.
std::string expected_line(const Translations& t, int step, const std::string& flags) {
  const auto single = run_command(t.bleu("--translation=" + t.file(step) + " " + flags));
  INFO(single.output);
  REQUIRE(single.exit_code == 0);
  std::string line = "step " + std::to_string(step) + " " + t.file(step) + ":";
  for (const auto& h : headlines(single.output)) line += "  " + h;
  return line + "\n";
}

// The lines that begin with `start`.
size_t lines_starting(const std::string& text, const std::string& start) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.rfind(start, 0) == 0;
  return n;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Event protos, decoded by hand as the writer encodes them (tests/
// test_events.cc checks that encoding against protobuf itself).
struct Event {
  int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> values;
};

uint64_t varint(const std::string& s, size_t* at) {
  uint64_t v = 0;
  for (int shift = 0; *at < s.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(s[(*at)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
  }
  return v;
}

// Calls f(field, wire_type, varint value, bytes) for each field of message `s`.
template <typename F>
void fields(const std::string& s, F f) {
  for (size_t at = 0; at < s.size();) {
    const uint64_t key = varint(s, &at);
    const int type = static_cast<int>(key & 7);
    uint64_t v = 0;
    std::string bytes;
    if (type == 0) {
      v = varint(s, &at);
    } else {
      const size_t n = type == 1 ? 8 : type == 5 ? 4 : varint(s, &at);
      bytes = s.substr(at, n);
      at += n;
    }
    f(static_cast<int>(key >> 3), v, bytes);
  }
}

std::vector<Event> read_events(const std::string& dir) {
  std::vector<Event> events;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
    t2t::TFRecordReader reader(entry.path().string());
    for (std::string record; reader.next(&record);) {
      Event e;
      fields(record, [&](int field, uint64_t v, const std::string& bytes) {
        if (field == 2) e.step = static_cast<int64_t>(v);
        if (field == 3) e.file_version = bytes;
        if (field != 5) return;
        fields(bytes, [&](int, uint64_t, const std::string& value) {  // Summary.value
          std::pair<std::string, float> tv;
          fields(value, [&](int f, uint64_t, const std::string& b) {
            if (f == 1) tv.first = b;
            if (f == 2) std::memcpy(&tv.second, b.data(), 4);
          });
          e.values.push_back(tv);
        });
      });
      events.push_back(e);
    }
  }
  return events;
}

size_t event_files(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    n += entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  return n;
}

// The scores of a --translations_dir line, by tag.
double score_in(const std::string& line, const std::string& tag) {
  const size_t at = line.find(tag + " = ");
  REQUIRE(at != std::string::npos);
  return std::stod(line.substr(at + tag.size() + 3));
}

}  // namespace

TEST_CASE("t2t-bleu --translations_dir scores every step file as --translation does",
          "[bleu_dir]") {
  Translations t("bleu_dir_scores");
  auto r = run_command(t.bleu("--translations_dir=" + t.tr));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Known scores: the reference itself, and a copy that differs only in case.
  CHECK_THAT(r.output, Catch::Contains("step 100 " + t.file(100) +
                                       ":  BLEU_uncased = 100.00  BLEU_cased = 100.00\n"));
  CHECK_THAT(r.output, Catch::Contains("step 5 " + t.file(5) + ":  BLEU_uncased = 100.00  "));
  // Each line as --translation scores the file, in step order.
  size_t last = 0;
  for (int step : {5, 20, 100}) {
    INFO("step " << step);
    const std::string line = expected_line(t, step, "");
    const size_t at = r.output.find(line);
    CHECK(at != std::string::npos);
    CHECK(at > last);
    last = at;
    CHECK(lines_starting(r.output, "step " + std::to_string(step) + " ") == 1);
  }
  // How the numbers were made, once.
  CHECK(count(r.output, "BLEU_cased signature: nrefs:1|case:mixed|eff:no|tok:13a|") == 1);
  // Names without a step are skipped with a line; a file being written is not a step file.
  CHECK(count(r.output, "skipping " + t.tr + "/notes.txt: no step") == 1);
  CHECK_THAT(r.output, !Catch::Contains("p-7"));

  // The scoring flags apply to every file.
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --metric=t2t --bleu_variant=cased"));
  REQUIRE(r.exit_code == 0);
  for (int step : {5, 20, 100})
    CHECK_THAT(r.output, Catch::Contains(expected_line(t, step, "--metric=t2t --bleu_variant=cased")));
  CHECK_THAT(r.output, !Catch::Contains("uncased"));
  CHECK_THAT(r.output, !Catch::Contains("signature"));
}

TEST_CASE("t2t-bleu --min_steps leaves out files of fewer steps", "[bleu_dir]") {
  Translations t("bleu_dir_min_steps");
  auto r = run_command(t.bleu("--translations_dir=" + t.tr + " --min_steps=20"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(lines_starting(r.output, "step 5 ") == 0);
  CHECK(lines_starting(r.output, "step 20 ") == 1);
  CHECK(lines_starting(r.output, "step 100 ") == 1);
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --min_steps=101"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("holds no translation named <problem>-<step> of at least "
                                       "--min_steps=101 steps"));
}

TEST_CASE("t2t-bleu --event_dir writes each score at its step and resumes after the last",
          "[bleu_dir]") {
  Translations t("bleu_dir_events");
  const std::string ev = t.dir / "events";
  auto r = run_command(t.bleu("--translations_dir=" + t.tr + " --event_dir=" + ev +
                              " --tag_suffix=_beam4"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto events = read_events(ev);
  // file_version, BLEU 0 at step 0 (--report_zero's default with --min_steps 0), 5, 20, 100.
  REQUIRE(events.size() == 5);
  CHECK(events[0].file_version == "brain.Event:2");
  const std::vector<int64_t> steps = {0, 5, 20, 100};
  for (size_t i = 0; i < steps.size(); ++i) {
    const Event& e = events[i + 1];
    INFO("event at step " << steps[i]);
    CHECK(e.step == steps[i]);
    REQUIRE(e.values.size() == 2);
    CHECK(e.values[0].first == "BLEU_uncased_beam4");
    CHECK(e.values[1].first == "BLEU_cased_beam4");
    if (steps[i] == 0) {
      CHECK(e.values[0].second == 0.0f);
      CHECK(e.values[1].second == 0.0f);
      continue;
    }
    // The printed scores, to their two decimals.
    const std::string line = expected_line(t, static_cast<int>(steps[i]), "");
    CHECK(std::abs(e.values[0].second - score_in(line, "BLEU_uncased")) < 0.006);
    CHECK(std::abs(e.values[1].second - score_in(line, "BLEU_cased")) < 0.006);
  }
  CHECK(t2t::test::read_lines(ev + "/last_evaluated_step.txt") ==
        std::vector<std::string>{"100"});

  // A rerun scores nothing already scored and leaves no empty event file.
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --event_dir=" + ev +
                         " --tag_suffix=_beam4"));
  REQUIRE(r.exit_code == 0);
  CHECK(lines_starting(r.output, "step ") == 0);
  CHECK_THAT(r.output, Catch::Contains("nothing new"));
  CHECK(event_files(ev) == 1);
  // ...and only the new file once there is one, without a second zero.
  write_lines(t.file(200), kReference);
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --event_dir=" + ev +
                         " --tag_suffix=_beam4"));
  REQUIRE(r.exit_code == 0);
  CHECK(lines_starting(r.output, "step ") == 1);
  CHECK(lines_starting(r.output, "step 200 ") == 1);
  events = read_events(ev);
  CHECK(events.size() == 7);  // + file_version, step 200
  CHECK(t2t::test::read_lines(ev + "/last_evaluated_step.txt") ==
        std::vector<std::string>{"200"});

  // One variant, no zero when asked for none.
  const std::string ev2 = t.dir / "events2";
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --event_dir=" + ev2 +
                         " --bleu_variant=cased --report_zero=false"));
  REQUIRE(r.exit_code == 0);
  events = read_events(ev2);
  REQUIRE(events.size() == 5);  // file_version, 5, 20, 100, 200
  CHECK(events[1].step == 5);
  REQUIRE(events[1].values.size() == 1);
  CHECK(events[1].values[0].first == "BLEU_cased");
  // No zero either from a later start.
  const std::string ev3 = t.dir / "events3";
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --event_dir=" + ev3 +
                         " --min_steps=20"));
  REQUIRE(r.exit_code == 0);
  events = read_events(ev3);
  REQUIRE(events.size() == 4);  // file_version, 20, 100, 200
  CHECK(events[1].step == 20);

  write_lines(ev + "/last_evaluated_step.txt", {"soon"});
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --event_dir=" + ev));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains(ev + "/last_evaluated_step.txt holds 'soon'"));
}

TEST_CASE("t2t-bleu --wait_minutes scores the files that come while it waits", "[bleu_dir]") {
  Translations t("bleu_dir_wait");
  {
    t2t::test::BackgroundProcess bleu(
        t.bleu("--translations_dir=" + t.tr + " --wait_minutes=0.05"), t.dir / "log.txt");
    REQUIRE(bleu.wait_for("waiting up to", 60));
    // As t2t-translate-all writes: a temporary name, then the step file.
    write_lines(t.file(300) + ".tmp.1.0", kReference);
    fs::rename(t.file(300) + ".tmp.1.0", t.file(300));
    CHECK(bleu.wait_exit(60) == 0);
    const std::string log = bleu.log();
    INFO(log);
    const size_t scored = log.find("step 300 " + t.file(300) + ":  BLEU_uncased = 100.00");
    REQUIRE(scored != std::string::npos);
    CHECK(scored > log.find("waiting up to"));
    for (const char* step : {"step 5 ", "step 20 ", "step 100 ", "step 300 "})
      CHECK(lines_starting(log, step) == 1);  // none scored twice
    CHECK(count(log, "notes.txt") == 1);
    CHECK_THAT(log, Catch::Contains("no new translation in " + t.tr + " for 0.05 minute(s)"));
  }
  {
    // A directory that is not there yet.
    const std::string later = t.dir / "later";
    t2t::test::BackgroundProcess bleu(
        t.bleu("--translations_dir=" + later + " --wait_minutes=0.05"), t.dir / "log2.txt");
    REQUIRE(bleu.wait_for("waiting up to", 60));
    write_lines(later + "/p-40.tmp.1.0", kReference);
    fs::rename(later + "/p-40.tmp.1.0", later + "/p-40");
    CHECK(bleu.wait_exit(60) == 0);
    INFO(bleu.log());
    CHECK_THAT(bleu.log(), Catch::Contains("step 40 " + later + "/p-40:  BLEU_uncased = 100.00"));
  }
  // Nothing comes.
  const auto r = run_command(t.bleu("--translations_dir=" + (t.dir / "never") +
                                    " --wait_minutes=0.01"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("none came within --wait_minutes"));
}

TEST_CASE("t2t-bleu refuses the directory flags where they would do nothing", "[bleu_dir]") {
  Translations t("bleu_dir_refused");
  auto r = run_command(t.bleu("--translation=" + t.file(5) + " --translations_dir=" + t.tr));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--translation and --translations_dir both"));
  for (const char* flag : {"--event_dir=ev", "--tag_suffix=_b", "--min_steps=3",
                           "--wait_minutes=0.05", "--report_zero"}) {
    INFO(flag);
    r = run_command(t.bleu("--translation=" + t.file(5) + " " + flag));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(std::string(flag).substr(0, std::string(flag).find('=')) +
                                         " applies to --translations_dir"));
  }
  for (const char* flag : {"--tag_suffix=_b", "--report_zero=true"}) {
    INFO(flag);
    r = run_command(t.bleu("--translations_dir=" + t.tr + " " + flag));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("give --event_dir=DIR too"));
  }
  r = run_command(t.bleu(""));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--translation is required"));
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --min_steps=-2"));
  CHECK(r.exit_code == 2);
  r = run_command(t.bleu("--translations_dir=" + t.tr + " --wait_minutes=-1"));
  CHECK(r.exit_code == 2);
  r = run_command(t.bleu("--translations_dir=" + (t.dir / "missing")));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--translations_dir=" + (t.dir / "missing") +
                                       " does not exist"));
  // A file of another length is an error that names it.
  write_lines(t.file(50), {"one line"});
  r = run_command(t.bleu("--translations_dir=" + t.tr));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains(t.file(50) + " has 1 lines but --reference="));
}

TEST_CASE("t2t-bleu --translations_dir takes several references and metrics, tagged by name",
          "[bleu_dir]") {
  Translations t("bleu_dir_metrics");
  const std::string ref_b = t.dir / "ref_b.txt";
  write_lines(ref_b, {"the cat sat on a mat", "it rains today", "hello there world"});
  const std::string flags = "--reference=" + ref_b + " --metric=bleu,chrf++,ter "
                            "--bleu_variant=cased";
  const std::string ev = t.dir / "events";
  auto r = run_command(t.bleu("--translations_dir=" + t.tr + " " + flags + " --event_dir=" + ev));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Each file as --translation scores it.
  for (int step : {5, 20, 100}) {
    const auto single = run_command(t.bleu("--translation=" + t.file(step) + " " + flags));
    REQUIRE(single.exit_code == 0);
    for (const char* tag : {"BLEU_cased", "chrF2++_cased", "TER_cased"}) {
      const size_t at = single.output.find(std::string(tag) + " = ");
      REQUIRE(at != std::string::npos);
      const size_t end = single.output.find_first_of(" \n", at + std::strlen(tag) + 3);
      const std::string headline = single.output.substr(at, end - at);
      CHECK_THAT(r.output, Catch::Contains(headline));
    }
  }
  // p-20 equals the second reference: every metric sees it.
  std::string line20;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("step 20 ", 0) == 0) line20 = line;
  CHECK(score_in(line20, "BLEU_cased") == 100.0);
  CHECK(score_in(line20, "TER_cased") == 0.0);
  CHECK_THAT(r.output, Catch::Contains("TER_cased signature: nrefs:2|case:mixed|tok:tercom|"));
  auto events = read_events(ev);
  REQUIRE(events.size() == 5);
  const Event& last = events.back();
  REQUIRE(last.values.size() == 3);
  CHECK(last.values[0].first == "BLEU_cased");
  CHECK(last.values[1].first == "chrF2++_cased");
  CHECK(last.values[2].first == "TER_cased");
  CHECK(last.values[2].second == 0.0f);  // p-100 is the first reference
}
