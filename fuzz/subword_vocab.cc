// Subword vocabularies (T2T's .subwords files), loaded and used.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/text/subword_text_encoder.h"

T2T_FUZZ_TARGET(subword_vocab) {
  const std::string path = t2t::fuzz::scratch_file("vocab.subwords", data);
  try {
    const auto encoder = t2t::SubwordTextEncoder::load(path);
    const auto ids = encoder.encode("Hello, world! 你好 \xF0\x9F\x98\x80 a_b\\u 123");
    encoder.decode(ids);
  } catch (const t2t::Error&) {
  }
}
