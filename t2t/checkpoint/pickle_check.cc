#include "t2t/checkpoint/pickle_check.h"

#include <cstdint>

#include "t2t/core/error.h"

namespace t2t {

namespace {

// How an opcode's argument is laid out (Python's pickletools lists them).
enum class Arg {
  kNone,       // no argument
  kFixed,      // `size` bytes
  kLine,       // up to and including a newline
  kTwoLines,   // two newline-terminated lines (GLOBAL, INST)
  kCounted,    // a little-endian count of `size` bytes, then that many bytes
  kMemoIndex,  // a little-endian memo index of `size` bytes
  kFrame,      // a little-endian length of `size` bytes: the opcodes that follow
};

struct Op {
  Arg arg = Arg::kNone;
  int size = 0;
  bool known = false;
};

const Op* op_table() {
  static Op table[256];
  static const bool filled = [] {
    auto set = [](unsigned char code, Arg arg, int size = 0) { table[code] = {arg, size, true}; };
    for (unsigned char c : std::string_view("(.012NQRabdelostu)}]\x81\x85\x86\x87\x88\x89\x8f"
                                            "\x90\x91\x92\x93\x97\x98"))
      set(c, Arg::kNone);
    set('\x94', Arg::kNone);  // MEMOIZE: stores under the next index
    set('F', Arg::kLine);  // FLOAT
    set('I', Arg::kLine);  // INT
    set('L', Arg::kLine);  // LONG
    set('P', Arg::kLine);  // PERSID
    set('S', Arg::kLine);  // STRING
    set('V', Arg::kLine);  // UNICODE
    set('g', Arg::kLine);  // GET
    set('p', Arg::kLine);  // PUT
    set('c', Arg::kTwoLines);  // GLOBAL
    set('i', Arg::kTwoLines);  // INST
    set('J', Arg::kFixed, 4);  // BININT
    set('K', Arg::kFixed, 1);  // BININT1
    set('M', Arg::kFixed, 2);  // BININT2
    set('G', Arg::kFixed, 8);  // BINFLOAT
    set('\x80', Arg::kFixed, 1);  // PROTO
    set('\x82', Arg::kFixed, 1);  // EXT1
    set('\x83', Arg::kFixed, 2);  // EXT2
    set('\x84', Arg::kFixed, 4);  // EXT4
    set('\x95', Arg::kFrame, 8);  // FRAME
    set('h', Arg::kMemoIndex, 1);  // BINGET
    set('j', Arg::kMemoIndex, 4);  // LONG_BINGET
    set('q', Arg::kMemoIndex, 1);  // BINPUT
    set('r', Arg::kMemoIndex, 4);  // LONG_BINPUT
    set('T', Arg::kCounted, 4);  // BINSTRING
    set('U', Arg::kCounted, 1);  // SHORT_BINSTRING
    set('X', Arg::kCounted, 4);  // BINUNICODE
    set('B', Arg::kCounted, 4);  // BINBYTES
    set('C', Arg::kCounted, 1);  // SHORT_BINBYTES
    set('\x8a', Arg::kCounted, 1);  // LONG1
    set('\x8b', Arg::kCounted, 4);  // LONG4
    set('\x8c', Arg::kCounted, 1);  // SHORT_BINUNICODE
    set('\x8d', Arg::kCounted, 8);  // BINUNICODE8
    set('\x8e', Arg::kCounted, 8);  // BINBYTES8
    set('\x96', Arg::kCounted, 8);  // BYTEARRAY8
    return true;
  }();
  (void)filled;
  return table;
}

uint64_t little_endian(std::string_view bytes) {
  uint64_t n = 0;
  for (size_t i = bytes.size(); i-- > 0;) n = n << 8 | static_cast<unsigned char>(bytes[i]);
  return n;
}

}  // namespace

void check_pickle(std::string_view pickle, const std::string& what) {
  const Op* table = op_table();
  // Memo entries so far: each opcode makes at most one, so an index beyond
  // their count names nothing (and would make the unpickler grow its memo).
  uint64_t opcodes = 0;
  size_t at = 0;
  auto refuse = [&](size_t where, const std::string& why) {
    throw Error(what + ": byte " + std::to_string(where) + " of its pickle: " + why);
  };
  while (at < pickle.size()) {
    const size_t start = at;
    const auto code = static_cast<unsigned char>(pickle[at++]);
    const Op& op = table[code];
    if (!op.known) refuse(start, "no pickle opcode " + std::to_string(code));
    if (code == '.') return;  // STOP
    ++opcodes;
    // The fixed-size part of the argument: a value, a count or an index.
    uint64_t value = 0;
    if (op.size > 0) {
      if (pickle.size() - at < static_cast<size_t>(op.size)) refuse(start, "an opcode cut short");
      value = little_endian(pickle.substr(at, op.size));
      at += op.size;
    }
    switch (op.arg) {
      case Arg::kNone:
      case Arg::kFixed:
        break;
      case Arg::kLine:
      case Arg::kTwoLines:
        for (int line = 0; line < (op.arg == Arg::kTwoLines ? 2 : 1); ++line) {
          const size_t nl = pickle.find('\n', at);
          if (nl == std::string_view::npos) refuse(start, "a line without its end");
          at = nl + 1;
        }
        break;
      case Arg::kMemoIndex:
        if (value >= opcodes) refuse(start, "memo index " + std::to_string(value) +
                                                " beyond any the pickle could have made");
        break;
      case Arg::kFrame:
      case Arg::kCounted:
        if (value > pickle.size() - at)
          refuse(start, std::string(op.arg == Arg::kFrame ? "a frame" : "a length") + " of " +
                            std::to_string(value) + " bytes with " +
                            std::to_string(pickle.size() - at) + " left");
        // A frame's bytes are the opcodes that follow; a count's are skipped.
        if (op.arg == Arg::kCounted) at += value;
        break;
    }
  }
  refuse(pickle.size(), "the pickle ends without STOP");
}

}  // namespace t2t
