// Checkpoint files (LibTorch archives: a zip of a pickled module object and
// its tensors' records) read without running anything they hold. LibTorch's
// own loader (torch::jit::load, behind torch::serialize::InputArchive)
// compiles the TorchScript classes of the file's code/ records and calls
// their __setstate__, which can run any TorchScript op, file writes
// included; and it trusts each tensor's shape to lie within its record.
// The reader here unpickles with empty classes of its own, so nothing of
// the file runs, and checks every tensor against its storage, every record
// against the file, and every decompressed record against what deflate can
// give from the file's bytes.
//
// The tensors are read in place: each tensor's memory is its record in the
// mapped file, so loading copies nothing.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace at {
class Tensor;
}
namespace torch::serialize {
class InputArchive;
}

namespace t2t {

// A nested archive (the optimizer's) by its key, as a LibTorch
// InputArchive for the optimizer's own loader to read: rebuilt from the
// values the reader found and written again by LibTorch, so the archive
// LibTorch then loads holds nothing but what LibTorch itself wrote.
using NestedArchives = std::map<std::string, std::shared_ptr<torch::serialize::InputArchive>>;

// Every top-level tensor of the archive at `path` by key ("model/...",
// "meta/..."); with `nested`, also its nested archives, else they are left
// out. Throws t2t::Error naming `path` when it is missing, damaged,
// malformed or no such archive.
std::map<std::string, at::Tensor> read_mapped_archive(const std::string& path,
                                                      NestedArchives* nested = nullptr);

}  // namespace t2t
