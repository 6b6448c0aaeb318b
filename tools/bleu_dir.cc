#include "tools/bleu_dir.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/io/event_writer.h"

namespace t2t::bleu {

namespace fs = std::filesystem;

namespace {

// T2T's name for the step scored last, kept in --event_dir.
constexpr char kLastStepFile[] = "last_evaluated_step.txt";

// A step count written in decimal digits alone; none for anything else.
std::optional<int64_t> parse_step(const std::string& digits) {
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoll(digits);
}

// The step in a file name: the digits after its last '-', as T2T reads
// t2t-translate-all's names; none for other names.
std::optional<int64_t> step_of(const std::string& name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos) return std::nullopt;
  return parse_step(name.substr(dash + 1));
}

class DirScorer {
 public:
  DirScorer(const DirOptions& o, const ScoreFile& score)
      : o_(o), score_file_(score), next_step_(o.min_steps) {}

  // Scores what there is and, with wait_minutes, what comes; returns how
  // many files were scored.
  int run() {
    const double limit = o_.wait_minutes * 60;
    // Often enough to follow translate-all closely, rarely enough to cost nothing.
    const double poll = std::clamp(limit / 20, 0.1, 10.0);
    Stopwatch since_new;
    bool waiting = false;
    for (bool first = true;; first = false) {
      const auto todo = pending();
      if (first) {
        std::string steps;
        for (const auto& f : todo) steps += (steps.empty() ? "" : ", ") + std::to_string(f.step);
        spdlog::info("{} file(s) to score in {}{}{}", todo.size(), o_.dir,
                     o_.min_steps > 0 ? fmt::format(" of at least {} steps", o_.min_steps) : "",
                     steps.empty() ? "" : ": steps " + steps);
      }
      if (!todo.empty()) {
        for (const auto& f : todo) score(f);
        since_new.restart();
        waiting = false;
        continue;  // more may have come meanwhile
      }
      if (o_.wait_minutes <= 0 || since_new.seconds() >= limit) break;
      if (!waiting)
        spdlog::info("waiting up to {:.0f} s for a new translation in {}",
                     limit - since_new.seconds(), o_.dir);
      waiting = true;
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::min(poll, limit - since_new.seconds())));
    }
    if (o_.wait_minutes > 0)
      spdlog::info("no new translation in {} for {} minute(s); stopping", o_.dir,
                   o_.wait_minutes);
    return scored_;
  }

 private:
  struct StepFile {
    int64_t step;
    std::string path;
  };

  // The files not scored yet, in step order. Once a step is scored, files
  // of fewer steps are passed over even if they come later, as in T2T:
  // TensorBoard takes a step that goes back for a restarted run and drops
  // the points after it.
  std::vector<StepFile> pending() {
    std::vector<StepFile> out;
    std::error_code ec;  // a directory that is not there (yet) holds nothing
    for (fs::directory_iterator it(o_.dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec)) continue;
      const std::string name = it->path().filename().string();
      const std::string path = it->path().string();
      // t2t-translate-all's file being written (t2t::temp_path_for): it
      // gets its name with the step once complete.
      if (name.find(".tmp.") != std::string::npos) continue;
      const auto step = step_of(name);
      if (!step) {
        if (skipped_.insert(name).second)
          spdlog::info("skipping {}: no step after the last '-' of its name "
                       "(t2t-translate-all writes <problem>-<step>)", path);
        continue;
      }
      if (*step < next_step_) continue;
      const bool is_reference =
          std::any_of(o_.references.begin(), o_.references.end(), [&](const std::string& ref) {
            return fs::equivalent(it->path(), ref, file_ec);
          });
      if (is_reference) {
        if (skipped_.insert(name).second) spdlog::info("skipping {}: it is a --reference", path);
        continue;
      }
      out.push_back({*step, path});
    }
    std::sort(out.begin(), out.end(), [](const StepFile& a, const StepFile& b) {
      return a.step != b.step ? a.step < b.step : a.path < b.path;
    });
    return out;
  }

  void score(const StepFile& f) {
    std::vector<VariantScore> scores;
    try {
      scores = score_file_(f.path);
    } catch (const Error&) {
      if (fs::exists(f.path)) throw;
      spdlog::warn("{} was deleted before it could be read; skipping it", f.path);
      return;
    }
    next_step_ = std::max(next_step_, f.step + 1);
    // How the numbers were made, once: the same for every file.
    if (scored_++ == 0)
      for (const auto& v : scores)
        if (!v.signature.empty()) std::cout << v.tag << " signature: " << v.signature << "\n";
    std::cout << "step " << f.step << " " << f.path << ":";
    for (const auto& v : scores) std::cout << "  " << v.headline;
    std::cout << std::endl;  // out as soon as a file is done: it is the progress line
    if (!o_.event_dir.empty()) write_events(f.step, scores);
  }

  void write_events(int64_t step, const std::vector<VariantScore>& scores) {
    std::vector<std::pair<std::string, double>> values, zeros;
    for (const auto& v : scores) {
      values.emplace_back(v.tag + o_.tag_suffix, v.score);
      zeros.emplace_back(v.tag + o_.tag_suffix, 0.0);
    }
    // Made on the first score, so that a run with nothing new leaves no
    // empty event file behind.
    if (!events_) {
      events_ = std::make_unique<EventWriter>(o_.event_dir);
      if (o_.report_zero) events_->add_scalars(0, zeros);
    }
    events_->add_scalars(step, values);
    events_->flush();
    // Once the event is out: a rerun resumes after this step.
    write_file_atomic((fs::path(o_.event_dir) / kLastStepFile).string(),
                      std::to_string(step) + "\n");
  }

  const DirOptions& o_;
  const ScoreFile& score_file_;
  int64_t next_step_;              // files of fewer steps are done or below --min_steps
  std::set<std::string> skipped_;  // names already logged as skipped
  std::unique_ptr<EventWriter> events_;
  int scored_ = 0;
};

}  // namespace

void resolve_min_steps(int64_t flag_value, DirOptions* o) {
  o->min_steps = flag_value;
  o->resumed = false;
  if (flag_value >= 0) return;
  o->min_steps = 0;
  if (o->event_dir.empty()) return;
  const std::string path = (fs::path(o->event_dir) / kLastStepFile).string();
  if (!fs::exists(path)) return;
  const std::string text = trim(read_file(path));
  const auto last = parse_step(text);
  if (!last)
    throw Error(path + " holds '" + text + "', not the step scored last; delete it to score "
                "every file, or give --min_steps");
  // T2T scores that step again, which puts a second point on it.
  o->min_steps = *last + 1;
  o->resumed = true;
  spdlog::info("scoring files after step {}, the last in {} (--min_steps=0 scores them all)",
               *last, path);
}

int score_dir(const DirOptions& o, const ScoreFile& score) {
  std::error_code ec;
  const bool exists = fs::exists(o.dir, ec);
  if (exists && !fs::is_directory(o.dir, ec))
    throw Error("--translations_dir=" + o.dir + " is a file, not a directory");
  if (!exists && o.wait_minutes <= 0)
    throw Error("--translations_dir=" + o.dir + " does not exist; give the --translations_dir "
                "of t2t-translate-all (or --wait_minutes to wait for it)");
  if (!exists) spdlog::info("{} does not exist yet; waiting for it", o.dir);
  if (DirScorer(o, score).run() > 0) return 0;
  if (o.resumed) {
    spdlog::info("nothing new in {} since step {}", o.dir, o.min_steps - 1);
    return 0;
  }
  throw Error("--translations_dir=" + o.dir + " holds no translation named <problem>-<step>" +
              (o.min_steps > 0 ? " of at least --min_steps=" + std::to_string(o.min_steps) +
                                     " steps"
                               : std::string()) +
              (o.wait_minutes > 0 ? ", and none came within --wait_minutes" : "") +
              "; write them with t2t-translate-all --translations_dir=" + o.dir);
}

}  // namespace t2t::bleu
