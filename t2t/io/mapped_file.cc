#include "t2t/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "t2t/core/error.h"

namespace t2t {
namespace {

// What a shared span holds on to: the mapping, and the span to give back.
struct Span {
  std::shared_ptr<MappedFile> file;
  char* begin;
  size_t size;
};

// The pages wholly inside [begin, begin + size): the first and last pages
// of a span may hold a neighbouring tensor's bytes.
std::pair<uintptr_t, uintptr_t> inner_pages(const char* begin, size_t size) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(begin);
  return {(start + page - 1) / page * page, (start + size) / page * page};
}

void drop_pages(std::pair<uintptr_t, uintptr_t> pages) {
  if (pages.second > pages.first)
    madvise(reinterpret_cast<void*>(pages.first), pages.second - pages.first, MADV_DONTNEED);
}

void release_span(void* context) {
  auto* span = static_cast<Span*>(context);
  // Dropped pages of a private mapping read as the file again, and this
  // span is no one's any more.
  drop_pages(inner_pages(span->begin, span->size));
  delete span;
}

// /proc/self/pagemap's entry of a page: bit 63 present, bit 62 swapped
// out, bit 61 a page of the file (a page written in a private mapping is
// present or swapped, and not the file's).
bool resident_file_page(uint64_t e) { return (e >> 63 & 1) && (e >> 61 & 1); }
bool written_page(uint64_t e) { return !(e >> 61 & 1) && ((e >> 63 & 1) || (e >> 62 & 1)); }

// Calls visit(page address, entry) for each page in [first, end), in order;
// false when /proc/self/pagemap cannot be read.
template <typename Visit>
bool for_each_page(std::pair<uintptr_t, uintptr_t> pages, Visit&& visit) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = true;
  std::vector<uint64_t> entries(4096);
  for (uintptr_t p = pages.first; p < pages.second;) {
    const size_t n = std::min<size_t>(entries.size(), (pages.second - p) / page);
    const auto bytes = static_cast<ssize_t>(n * sizeof(uint64_t));
    if (pread(fd, entries.data(), bytes, static_cast<off_t>(p / page * sizeof(uint64_t))) != bytes) {
      ok = false;
      break;
    }
    for (size_t i = 0; i < n; ++i) visit(p + i * page, entries[i]);
    p += n * page;
  }
  ::close(fd);
  return ok;
}

// Whether no page in [first, end) is a private copy, made by a write. False
// when that cannot be told.
bool unwritten(std::pair<uintptr_t, uintptr_t> pages) {
  bool clean = true;
  return for_each_page(pages, [&](uintptr_t, uint64_t e) { clean = clean && !written_page(e); }) &&
         clean;
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

bool give_back_pages(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.has_storage()) return false;
  const auto& storage = tensor.storage();
  if (storage.data_ptr().get_deleter() != &release_span) return false;
  const auto pages = inner_pages(static_cast<const char*>(storage.data()), storage.nbytes());
  if (pages.second <= pages.first || !unwritten(pages)) return false;
  drop_pages(pages);
  return true;
}

size_t give_back_library_pages() {
  std::ifstream maps("/proc/self/maps");
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  size_t given = 0;
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode path"
    std::istringstream fields(line);
    std::string range, perms, offset, dev, path;
    uint64_t inode = 0;
    if (!(fields >> range >> perms >> offset >> dev >> inode >> path)) continue;
    // Shared objects only: they stay mapped for the life of the process (t2t
    // unloads none), where another read-only file mapping could be unmapped
    // meanwhile and its addresses given to memory of the program's.
    if (inode == 0 || path.empty() || path[0] != '/' || perms.size() < 4 || perms[1] == 'w' ||
        perms[3] != 'p' || path.find(".so") == std::string::npos)
      continue;
    const size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    const auto first = static_cast<uintptr_t>(std::stoull(range.substr(0, dash), nullptr, 16));
    const auto end = static_cast<uintptr_t>(std::stoull(range.substr(dash + 1), nullptr, 16));
    // Runs of pages not written, each given back in one call: a page not
    // resident costs the call nothing, and fewer calls interrupt the other
    // threads (each flushes their TLBs) fewer times. A run ends before the
    // first page not seen, should the reading stop.
    uintptr_t run = 0, seen_end = first;
    size_t resident = 0;
    const auto flush = [&](uintptr_t at) {
      if (run != 0 && at > run) drop_pages({run, at});
      run = 0;
    };
    for_each_page({first, end}, [&](uintptr_t p, uint64_t e) {
      if (written_page(e)) {
        flush(p);
      } else if (run == 0) {
        run = p;
      }
      resident += resident_file_page(e);
      seen_end = p + page;
    });
    if (resident == 0) continue;  // nothing to give back
    flush(seen_end);
    given += resident * page;
  }
  return given;
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
