// The tensors of a checkpoint file (a LibTorch archive, as
// torch::serialize::OutputArchive writes it) read in place: the file is
// mapped (t2t/io/mapped_file.h) and each tensor's memory is its record in
// the mapping, so that loading a model for decoding copies nothing and
// weights become resident as they are used. What the decoder, averaging and
// the Python state_dict read; resuming a run, which needs the optimizer's
// nested archive, reads through torch::serialize::InputArchive.
#pragma once

#include <map>
#include <string>

namespace at {
class Tensor;
}

namespace t2t {

// Every top-level tensor of the archive at `path` by key ("model/...",
// "meta/..."); nested archives (the optimizer's) are left out. Throws
// t2t::Error naming `path` when it is missing, damaged or no such archive.
std::map<std::string, at::Tensor> read_mapped_archive(const std::string& path);

}  // namespace t2t
