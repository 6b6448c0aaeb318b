// A pickle's opcodes walked before LibTorch's unpickler sees them: its
// unpickler reserves a string or bytes object of whatever length the
// opcode claims before reading it (1.7 GB from a 16 KB checkpoint, as the
// fuzzer found), and takes memo indices as they come. Here every length
// must fit in the bytes that follow it, every memo index must be one an
// earlier opcode could have made, and every opcode must be one of the
// pickle protocols' (0 to 5). Nothing is built.
#pragma once

#include <string>
#include <string_view>

namespace t2t {

// Throws t2t::Error naming `what` and the offset of the first opcode that
// breaks these rules, or when the pickle has no STOP.
void check_pickle(std::string_view pickle, const std::string& what);

}  // namespace t2t
