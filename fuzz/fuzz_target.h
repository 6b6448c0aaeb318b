// One harness per reader of untrusted bytes. In the fuzz build (fuzz/
// CMakeLists.txt: clang, libFuzzer, ASan + UBSan) T2T_FUZZ_TARGET(name)
// defines the fuzzer's entry point; in the ordinary build the harness is
// registered instead, and tests/fuzz replays its seed corpus
// (fuzz/corpus/<name>) and every past finding (fuzz/regressions/<name>).
//
// A harness hands the bytes to the reader and catches t2t::Error, the
// reader's refusal. Anything else that escapes (another exception, a crash,
// a sanitizer report, a hang, an allocation beyond the fuzzer's limit) is a
// finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t2t::fuzz {

using Harness = void (*)(std::string_view data);

// Returns true, so that a static initializer can call it.
bool register_harness(const char* name, Harness harness);
const std::vector<std::pair<std::string, Harness>>& harnesses();

// Writes `data` to this process's scratch file named `name` (in a private
// temporary directory) and returns its path: for readers that take paths.
std::string scratch_file(const std::string& name, std::string_view data);
// The private temporary directory itself.
const std::string& scratch_dir();

// Splits `data` at the first occurrence of `separator` (the whole of it and
// "" when absent): for harnesses whose reader takes two files.
std::pair<std::string_view, std::string_view> split_once(std::string_view data,
                                                         std::string_view separator);

}  // namespace t2t::fuzz

#ifdef T2T_FUZZING
#define T2T_FUZZ_TARGET(name)                                                          \
  static void t2t_fuzz_##name(std::string_view data);                                  \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {           \
    t2t_fuzz_##name(std::string_view(reinterpret_cast<const char*>(bytes), size));     \
    return 0;                                                                          \
  }                                                                                    \
  static void t2t_fuzz_##name(std::string_view data)
#else
#define T2T_FUZZ_TARGET(name)                                                          \
  static void t2t_fuzz_##name(std::string_view data);                                  \
  [[maybe_unused]] static const bool t2t_fuzz_registered_##name =                      \
      ::t2t::fuzz::register_harness(#name, t2t_fuzz_##name);                           \
  static void t2t_fuzz_##name(std::string_view data)
#endif
