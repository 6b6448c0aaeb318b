// A file mapped into memory, for weights read without a copy: a tensor's
// memory can be a span of the mapping (share()), so that loading costs no
// read into fresh pages and a weight is resident only once touched.
//
// The mapping is private and copy-on-write: a tensor written in place gets
// its own copy of the pages it writes, the file is never changed. t2t
// replaces its files by renaming a new one over them, which leaves a mapped
// one intact; a file truncated in place while mapped would make reads of the
// lost pages fault (SIGBUS), as with any mapped file.
#pragma once

#include <c10/core/Allocator.h>

#include <cstddef>
#include <memory>
#include <string>

namespace at {
class Tensor;
}

namespace t2t {

class MappedFile : public std::enable_shared_from_this<MappedFile> {
 public:
  // Throws t2t::Error naming `path` when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Bytes [offset, offset + n) as CPU memory for a storage, which keeps the
  // mapping alive. When that storage is freed, the whole pages within the
  // span are given back to the kernel: weights read once (int8 values packed
  // into another layout) then stay resident no longer than their tensor.
  // Throws t2t::Error when the span is not within the file.
  c10::DataPtr share(size_t offset, size_t n);

 private:
  MappedFile(std::string path, char* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  char* data_ = nullptr;
  size_t size_ = 0;
};

// When `tensor`'s memory is a span of a mapped file (MappedFile::share) and
// none of it was written since, gives its resident pages back to the
// kernel, which reads them from the file again when they are next touched;
// returns whether it did. A weight read once to be laid out anew (packed
// for a kernel) then costs no memory beside its new copy, and stays usable.
// Memory written in place is this process's own copy and is left alone.
bool give_back_pages(const at::Tensor& tensor);

// Gives back the resident pages of the process's shared libraries' read-only
// mappings (their code and constants) that are still the files' own, as
// give_back_pages does for a weight; returns their bytes. It relies on no
// library being unloaded while it runs.
// LibTorch's start-up (its operator registry, built by static initializers
// spread over its whole library) leaves ~55 MiB of its code resident that a
// decoder never runs again. The pages stay in the page cache: what is used
// later comes back with a minor fault, and the process's resident set no
// longer counts the rest. Pages written (relocated constants) are left.
size_t give_back_library_pages();

}  // namespace t2t
