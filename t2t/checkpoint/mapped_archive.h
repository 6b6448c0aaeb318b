// The tensors of a checkpoint file (a LibTorch archive) read in place: each
// tensor's memory is its record in the mapped file, so loading copies
// nothing. Resuming a run, which needs the optimizer's nested archive,
// reads through torch::serialize::InputArchive instead.
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
