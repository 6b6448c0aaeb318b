#include "t2t/translate/decode_pieces.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/io/crc32c.h"
#include "t2t/translate/batch_translator.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// The input's lines and a checksum of its bytes, in one pass.
struct InputFacts {
  int64_t lines = 0;
  uint64_t bytes = 0;
  uint32_t crc = 0;
};

InputFacts scan_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw OptionError("decode_from_file", "cannot read {decode_from_file}=" + path);
  InputFacts facts;
  std::vector<char> block(1 << 20);
  char last = '\n';
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    facts.crc = crc32c_extend(facts.crc, block.data(), got);
    facts.bytes += got;
    for (size_t i = 0; i < got; ++i) facts.lines += block[i] == '\n';
    last = block[got - 1];
  }
  if (last != '\n') ++facts.lines;  // a last line without its newline
  return facts;
}

std::string piece_name(int64_t piece) {
  char name[32];
  std::snprintf(name, sizeof name, "piece-%06lld", static_cast<long long>(piece));
  return name;
}

// "1h02m", "3m10s", "42s".
std::string duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  char out[32];
  if (s >= 3600)
    std::snprintf(out, sizeof out, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  else if (s >= 60)
    std::snprintf(out, sizeof out, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  else
    std::snprintf(out, sizeof out, "%llds", static_cast<long long>(s));
  return out;
}

// The first line where two "key: value" texts differ, as "was -> now".
std::string first_difference(const std::string& was, const std::string& now) {
  const auto a = split(was, '\n'), b = split(now, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "(none)", y = i < b.size() ? b[i] : "(none)";
    if (x != y) return "'" + x + "' then, '" + y + "' now";
  }
  return "";
}

}  // namespace

std::string pieces_folder(const std::string& output_path) { return output_path + ".pieces"; }

DecodeOutcome decode_file_in_pieces(BatchTranslator& decoder, const std::string& input_path,
                                    const std::string& output_path, int64_t piece_lines,
                                    const std::string& settings, const ProgressFn& progress,
                                    const FileDecodeExtras& extras) {
  if (piece_lines < 1)
    throw OptionError("piece_lines", "{piece_lines}=" + std::to_string(piece_lines) +
                                         ": give the lines of a piece, >= 1");
  if (decoder.options().delimiter != "\n")
    throw OptionError("piece_lines", "{piece_lines} reads the input a line at a time: it goes "
                                     "with the default delimiter, not '" +
                                         decoder.options().delimiter + "'");
  for (const auto& [path, option] : {std::pair{extras.prefix_path, "prefix_file"},
                                     std::pair{extras.constraints_path, "constraints_file"},
                                     std::pair{extras.alignment_path, "alignment_file"}})
    if (!path.empty())
      throw OptionError(option, std::string("{") + option + "} is read whole; decode without "
                                "{piece_lines} to use it");

  const Stopwatch clock;
  const InputFacts input = scan_input(input_path);
  const int64_t pieces = (input.lines + piece_lines - 1) / piece_lines;
  const std::string folder = pieces_folder(output_path);
  char fingerprint[96];
  std::snprintf(fingerprint, sizeof fingerprint, "input: %llu bytes, crc32c %08x\npiece_lines: %lld\n",
                static_cast<unsigned long long>(input.bytes), input.crc,
                static_cast<long long>(piece_lines));
  const std::string manifest = std::string(fingerprint) + settings;
  const std::string manifest_path = (fs::path(folder) / "settings").string();

  int64_t done = 0;  // finished pieces, from the first on
  if (fs::exists(manifest_path)) {
    const std::string was = read_file(manifest_path);
    if (was != manifest)
      throw OptionError("piece_lines",
                        "the unfinished translation in " + folder + " was made with other "
                        "settings (" + first_difference(was, manifest) + "): give the same "
                        "input and settings to go on with it, or remove " + folder +
                        " to start afresh");
    while (done < pieces && fs::exists(fs::path(folder) / piece_name(done))) ++done;
    spdlog::info("going on with {}: {} of {} pieces of {} lines are done", folder, done, pieces,
                 piece_lines);
  } else {
    write_file_atomic(manifest_path, manifest);
  }
  spdlog::info("decoding {} lines of {} into {} in {} pieces of {} lines (finished pieces are "
               "kept in {})", input.lines, input_path, output_path, pieces, piece_lines, folder);

  std::ifstream in(input_path, std::ios::binary);
  std::string line;
  for (int64_t skipped = 0; skipped < done * piece_lines && std::getline(in, line); ++skipped) {
  }
  const int64_t lines_before = std::min(input.lines, done * piece_lines);
  const Stopwatch run_clock;
  int64_t translated = 0;
  for (int64_t piece = done; piece < pieces; ++piece) {
    std::vector<std::string> records;
    // Records as decode_file() reads them: split at '\n', nothing else removed.
    while (static_cast<int64_t>(records.size()) < piece_lines && std::getline(in, line))
      records.push_back(std::move(line));
    const int64_t first = piece * piece_lines;
    ProgressFn in_piece;
    if (progress)
      in_piece = [&progress, first, &input](int64_t done_here, int64_t) {
        progress(first + done_here, input.lines);
      };
    DecodedRecords decoded = decode_records(decoder, records, input_path, first, in_piece, extras);
    write_file_atomic((fs::path(folder) / piece_name(piece)).string(),
                      join_records(decoded.lines, "\n"));
    translated += static_cast<int64_t>(records.size());
    const int64_t total_done = lines_before + translated;
    const double secs = std::max(run_clock.seconds(), 1e-9);
    const double rate = translated / secs;
    spdlog::info("piece {} of {} done: {} of {} lines ({:.1f}%), {:.1f} lines/s, {} left", piece + 1,
                 pieces, total_done, input.lines,
                 input.lines > 0 ? 100.0 * total_done / input.lines : 100.0, rate,
                 duration(rate > 0 ? (input.lines - total_done) / rate : 0));
  }

  // The pieces joined, through a temporary file and a rename.
  const std::string temp = temp_path_for(output_path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + temp + " (for " + output_path + ")");
    for (int64_t piece = 0; piece < pieces; ++piece) out << read_file((fs::path(folder) / piece_name(piece)).string());
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(temp, ec);
      throw Error("cannot write " + output_path + " (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(temp, output_path, ec);
  if (ec) throw Error("cannot rename " + temp + " to " + output_path + ": " + ec.message());
  fs::remove_all(folder, ec);
  log_decode_summary(decoder, run_clock, translated);
  spdlog::info("wrote {} ({} lines) in {}", output_path, input.lines, duration(clock.seconds()));
  DecodeOutcome outcome;
  outcome.output_path = output_path;
  return outcome;
}

}  // namespace t2t
