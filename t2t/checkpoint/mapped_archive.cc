#include "t2t/checkpoint/mapped_archive.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/storage_context.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/io/mapped_file.h"

namespace t2t {
namespace {

constexpr const char* kRecordPrefix = "data/";
constexpr uint32_t kLocalHeaderSignature = 0x04034b50;  // a zip entry's "PK\3\4"

uint16_t little_endian16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | static_cast<uint8_t>(p[1]) << 8);
}
uint32_t little_endian32(const char* p) {
  return static_cast<uint32_t>(little_endian16(p)) |
         static_cast<uint32_t>(little_endian16(p + 2)) << 16;
}

// The zip reader reads the mapping itself, so that its directory and the
// records' bytes are certainly of one file, even if another is renamed over
// the path meanwhile.
class MappedReader : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit MappedReader(std::shared_ptr<MappedFile> file) : file_(std::move(file)) {}
  size_t size() const override { return file_->size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char*) const override {
    if (pos >= file_->size()) return 0;
    n = std::min<size_t>(n, file_->size() - pos);
    std::memcpy(buf, file_->data() + pos, n);
    return n;
  }

 private:
  std::shared_ptr<MappedFile> file_;
};

// Record `name`'s bytes as a storage in the mapping when the zip stores it
// as is (LibTorch always does, 64-byte aligned); else, for a file re-packed
// by another tool, as a copy read through `reader`.
c10::Storage record_storage(caffe2::serialize::PyTorchStreamReader& reader,
                            const std::shared_ptr<MappedFile>& file, const std::string& name) {
  const size_t size = reader.getRecordSize(name);
  const size_t header = reader.getRecordHeaderOffset(name);
  const bool stored = header + 30 <= file->size() &&
                      little_endian32(file->data() + header) == kLocalHeaderSignature &&
                      little_endian16(file->data() + header + 8) == 0;  // method 0: stored
  if (stored) {
    const size_t offset = reader.getRecordOffset(name);
    if (offset % alignof(std::max_align_t) == 0)
      return c10::Storage(c10::Storage::use_byte_size_t(), size, file->share(offset, size),
                          nullptr, false);
  }
  auto [data, n] = reader.getRecord(name);
  return c10::Storage(c10::Storage::use_byte_size_t(), n, std::move(data), nullptr, false);
}

}  // namespace

std::map<std::string, at::Tensor> read_mapped_archive(const std::string& path) {
  if (!std::filesystem::exists(path)) throw Error("no checkpoint at '" + path + "'");
  const auto file = MappedFile::open(path);
  std::map<std::string, at::Tensor> out;
  try {
    caffe2::serialize::PyTorchStreamReader reader(std::make_shared<MappedReader>(file));
    auto storages = std::make_shared<torch::jit::DeserializationStorageContext>();
    for (const std::string& name : reader.getAllRecords())
      if (name.rfind(kRecordPrefix, 0) == 0)
        storages->addStorage(name.substr(std::strlen(kRecordPrefix)),
                             record_storage(reader, file, name));
    // The archive is a module object whose state is a dict of its entries;
    // the unpickler needs a class for it (and for the optimizer's nested
    // one), and each object's state is kept aside here.
    auto unit = std::make_shared<torch::jit::CompilationUnit>();
    std::map<const c10::ivalue::Object*, c10::IValue> states;
    auto resolve = [&unit](const c10::QualifiedName& name) {
      return c10::StrongTypePtr(unit, c10::ClassType::create(name, unit));
    };
    auto load = [&states](const c10::StrongTypePtr& type, c10::IValue state) {
      auto object = c10::ivalue::Object::create(type, 0);
      states.emplace(object.get(), std::move(state));
      return object;
    };
    const c10::IValue root = torch::jit::readArchiveAndTensors(
        "data", "", kRecordPrefix, resolve, load, std::nullopt, reader,
        torch::jit::Unpickler::defaultTypeParser, storages);
    const auto it = root.isObject() ? states.find(root.toObject().get()) : states.end();
    if (it == states.end() || !it->second.isGenericDict())
      throw Error("checkpoint '" + path + "' is a LibTorch archive of another kind (no module "
                  "of named tensors): is it a t2t checkpoint?");
    for (const auto& entry : it->second.toGenericDict())
      if (entry.key().isString() && entry.value().isTensor())
        out.emplace(entry.key().toStringRef(), entry.value().toTensor());
  } catch (const c10::Error& e) {
    throw Error("cannot read checkpoint '" + path + "': " + e.what_without_backtrace() +
                ". The file is damaged or not a t2t checkpoint.");
  }
  return out;
}

}  // namespace t2t
