// A file mapped into memory, so a tensor's memory can be a span of it
// (share()): no copy, resident only once touched. The mapping is private and
// copy-on-write; the file is never changed. Files replaced by a rename stay
// intact; one truncated in place while mapped makes reads fault (SIGBUS).
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
  // mapping alive; freeing it gives the span's whole pages back to the
  // kernel. Throws t2t::Error when the span is not within the file.
  c10::DataPtr share(size_t offset, size_t n);

 private:
  MappedFile(std::string path, char* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  char* data_ = nullptr;
  size_t size_ = 0;
};

// When `tensor`'s memory is an unwritten span of a mapped file, gives its
// resident pages back (read again when next touched); returns whether it
// did. The tensor stays usable.
bool give_back_pages(const at::Tensor& tensor);

// Gives back the resident pages of the shared libraries' unwritten
// read-only mappings, as give_back_pages does; returns their bytes.
// LibTorch's start-up leaves much code resident that a decoder never runs
// again; what is used later comes back from the page cache. No library may
// be unloaded meanwhile.
size_t give_back_library_pages();

}  // namespace t2t
