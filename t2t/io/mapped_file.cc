#include "t2t/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "t2t/core/error.h"

namespace t2t {
namespace {

// What a shared span holds on to: the mapping, and the span to give back.
struct Span {
  std::shared_ptr<MappedFile> file;
  char* begin;
  size_t size;
};

void release_span(void* context) {
  auto* span = static_cast<Span*>(context);
  // Only the pages wholly inside the span: its first and last may hold a
  // neighbouring tensor's bytes. Dropped pages of a private mapping read as
  // the file again, and this span is no one's any more.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(span->begin) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(span->begin) + span->size) / page * page;
  if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
  delete span;
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error("cannot read the size of '" + path + "': " + std::strerror(err));
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error("cannot map '" + path + "' into memory: " + std::strerror(err));
    }
  }
  ::close(fd);  // the mapping keeps the file open
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<char*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_);
}

c10::DataPtr MappedFile::share(size_t offset, size_t n) {
  if (offset > size_ || n > size_ - offset)
    throw Error("'" + path_ + "' is shorter than its contents say (bytes " +
                std::to_string(offset) + " to " + std::to_string(offset + n) + " of " +
                std::to_string(size_) + "): the file is truncated or damaged");
  auto* span = new Span{shared_from_this(), data_ + offset, n};
  return c10::DataPtr(span->begin, span, &release_span, c10::Device(c10::DeviceType::CPU));
}

}  // namespace t2t
