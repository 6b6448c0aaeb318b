// SentencePiece models (.model files), loaded and used.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/text/sentencepiece_encoder.h"

T2T_FUZZ_TARGET(sentencepiece) {
  const std::string path = t2t::fuzz::scratch_file("spm.model", data);
  try {
    const t2t::SentencePieceEncoder encoder(path);
    const auto ids = encoder.encode("Hello, world! 你好 \xF0\x9F\x98\x80 123");
    encoder.decode(ids);
  } catch (const t2t::Error&) {
  }
}
