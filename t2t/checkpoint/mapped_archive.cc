#include "t2t/checkpoint/mapped_archive.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <c10/util/Logging.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/storage_context.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <new>
#include <unordered_map>

#include "t2t/checkpoint/pickle_check.h"
#include "t2t/core/error.h"
#include "t2t/io/mapped_file.h"

namespace t2t {
namespace {

constexpr const char* kRecordPrefix = "data/";
constexpr uint32_t kLocalHeaderSignature = 0x04034b50;  // a zip entry's "PK\3\4"
// Deflate makes at most 1032 bytes of one: a record that claims more than
// that of the whole file is a lie, not a reason to allocate.
constexpr uint64_t kMaxDeflateRatio = 1032;
// LibTorch nests an optimizer's state four archives deep; a file nesting
// deeper (or in a cycle, which a pickle can make) is no checkpoint.
constexpr int kMaxDepth = 16;

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
    if (offset > file->size() || size > file->size() - offset)
      throw Error("record '" + name + "' of " + std::to_string(size) + " bytes at " +
                  std::to_string(offset) + " runs past the file's end (" +
                  std::to_string(file->size()) + " bytes)");
    if (offset % alignof(std::max_align_t) == 0)
      return c10::Storage(c10::Storage::use_byte_size_t(), size, file->share(offset, size),
                          nullptr, false);
  } else if (size / kMaxDeflateRatio > file->size()) {
    throw Error("record '" + name + "' claims " + std::to_string(size) +
                " bytes, more than its compressed bytes can hold");
  }
  auto [data, n] = reader.getRecord(name);
  return c10::Storage(c10::Storage::use_byte_size_t(), n, std::move(data), nullptr, false);
}

// What LibTorch does not check when it rebuilds a tensor from the pickle:
// that its shape, strides and offset stay within its storage. A tensor
// that reached past it would read (or, copied into, write) other memory.
void check_tensor(const at::Tensor& t, const std::string& key) {
  auto refuse = [&key](const std::string& why) { throw Error("tensor '" + key + "' " + why); };
  if (t.layout() != at::kStrided || t.is_quantized())
    refuse("is not a dense tensor (a t2t checkpoint holds no other kind)");
  switch (t.scalar_type()) {
    case at::kFloat: case at::kDouble: case at::kHalf: case at::kBFloat16: case at::kChar:
    case at::kByte: case at::kShort: case at::kInt: case at::kLong: case at::kBool:
      break;
    default:  // LibTorch implements few operations for the others (sub-byte ints, ...)
      refuse(std::string("is of type ") + c10::toString(t.scalar_type()) +
             ", which a t2t checkpoint never holds");
  }
  if (!t.device().is_cpu() && !t.device().is_cuda())
    refuse("is on device '" + t.device().str() + "', neither the CPU nor a GPU");
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  if (t.storage_offset() < 0) refuse("has a negative storage offset");
  // The furthest element, in elements from the storage's start; any empty
  // dimension makes the tensor empty, and it reads nothing.
  uint64_t last = static_cast<uint64_t>(t.storage_offset());
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0) refuse("has a negative size or stride");
    if (sizes[d] == 0) empty = true;
  }
  if (empty) return;
  for (size_t d = 0; d < sizes.size(); ++d) {
    uint64_t reach = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(sizes[d] - 1),
                               static_cast<uint64_t>(strides[d]), &reach) ||
        __builtin_add_overflow(last, reach, &last))
      refuse("has a shape too large for any file");
  }
  uint64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<uint64_t>(t.element_size()), &bytes) ||
      bytes > t.storage().nbytes())
    refuse("of shape " + c10::str(sizes) + " reaches past its record (" +
           std::to_string(t.storage().nbytes()) + " bytes)");
}

// The unpickled graph: each object's state (a dict of named values) by the
// object, since the empty classes here have no attributes to hold it.
using States = std::unordered_map<const c10::ivalue::Object*, c10::IValue>;

// Checks every tensor within `value`, and that objects appear only as an
// archive's entries, where rebuild() takes them.
void check_value(const c10::IValue& value, const std::string& key, int depth) {
  if (depth > kMaxDepth) throw Error("'" + key + "' is nested too deep");
  if (value.isTensor()) return check_tensor(value.toTensor(), key);
  if (value.isObject()) throw Error("'" + key + "' holds an object within a value");
  if (value.isList())
    for (const c10::IValue& v : value.toListRef()) check_value(v, key, depth + 1);
  else if (value.isTuple())
    for (const c10::IValue& v : value.toTupleRef().elements()) check_value(v, key, depth + 1);
  else if (value.isGenericDict())
    for (const auto& entry : value.toGenericDict()) {
      check_value(entry.key(), key, depth + 1);
      check_value(entry.value(), key, depth + 1);
    }
}

// The dict of named values an archive object holds.
c10::impl::GenericDict entries_of(const c10::IValue& object, const States& states,
                                  const std::string& key) {
  const auto it = object.isObject() ? states.find(object.toObject().get()) : states.end();
  if (it == states.end() || !it->second.isGenericDict())
    throw Error((key.empty() ? std::string("the archive") : "'" + key + "'") +
                " is no module of named values");
  return it->second.toGenericDict();
}

// Writes the archive object `object` into `out` again, entry by entry.
void rebuild(const c10::IValue& object, const States& states, const std::string& key,
             int depth, torch::serialize::OutputArchive& out) {
  if (depth > kMaxDepth) throw Error("'" + key + "' is nested too deep");
  for (const auto& entry : entries_of(object, states, key)) {
    if (!entry.key().isString()) throw Error("'" + key + "' has an entry named by no string");
    const std::string name = entry.key().toStringRef();
    const std::string where = key + "/" + name;
    const c10::IValue& value = entry.value();
    if (value.isObject()) {
      torch::serialize::OutputArchive child(out.compilation_unit());
      rebuild(value, states, where, depth + 1, child);
      out.write(name, child);
    } else {
      check_value(value, where, depth);
      if (value.isTensor())
        out.write(name, value.toTensor());
      else
        out.write(name, value);
    }
  }
}

std::shared_ptr<torch::serialize::InputArchive> rebuilt_archive(const c10::IValue& object,
                                                                 const States& states,
                                                                 const std::string& key) {
  torch::serialize::OutputArchive out;
  rebuild(object, states, key, 1, out);
  std::string bytes;
  out.save_to([&bytes](const void* data, size_t n) {
    bytes.append(static_cast<const char*>(data), n);
    return n;
  });
  auto in = std::make_shared<torch::serialize::InputArchive>();
  in->load_from(bytes.data(), bytes.size());
  return in;
}

std::map<std::string, at::Tensor> read_archive(const std::shared_ptr<MappedFile>& file,
                                               NestedArchives* nested) {
  // LibTorch's C++ library starts with its CAFFE_ENFORCE checks (those of
  // its zip reader among them) set to abort the process, not to throw: a
  // malformed file would end the server or the run that read it.
  static const bool enforce_throws = [] {
    FLAGS_caffe2_use_fatal_for_enforce = false;
    return true;
  }();
  (void)enforce_throws;
  caffe2::serialize::PyTorchStreamReader reader(std::make_shared<MappedReader>(file));
  auto storages = std::make_shared<torch::jit::DeserializationStorageContext>();
  for (const std::string& name : reader.getAllRecords())
    if (name.rfind(kRecordPrefix, 0) == 0)
      storages->addStorage(name.substr(std::strlen(kRecordPrefix)),
                           record_storage(reader, file, name));
  // Every class the pickle names is an empty one made here: no code of the
  // file's is compiled, no __setstate__ runs, and each object's state is
  // kept aside.
  auto unit = std::make_shared<torch::jit::CompilationUnit>();
  States states;
  auto resolve = [&unit](const c10::QualifiedName& name) {
    return c10::StrongTypePtr(unit, c10::ClassType::create(name, unit));
  };
  auto load = [&states](const c10::StrongTypePtr& type, c10::IValue state) {
    auto object = c10::ivalue::Object::create(type, 0);
    states.emplace(object.get(), std::move(state));
    return object;
  };
  // LibTorch's unpickler believes the pickle's lengths: they are checked
  // against the record first.
  if (!reader.hasRecord("data.pkl")) throw Error("the archive has no data.pkl");
  const c10::Storage pickle = record_storage(reader, file, "data.pkl");
  check_pickle(std::string_view(static_cast<const char*>(pickle.data()), pickle.nbytes()),
               "data.pkl");
  const c10::IValue root = torch::jit::readArchiveAndTensors(
      "data", "", kRecordPrefix, resolve, load, std::nullopt, reader,
      torch::jit::Unpickler::defaultTypeParser, storages);
  std::map<std::string, at::Tensor> out;
  for (const auto& entry : entries_of(root, states, "")) {
    if (!entry.key().isString()) continue;
    const std::string& key = entry.key().toStringRef();
    if (entry.value().isTensor()) {
      check_tensor(entry.value().toTensor(), key);
      out.emplace(key, entry.value().toTensor());
    } else if (entry.value().isObject() && nested) {
      (*nested)[key] = rebuilt_archive(entry.value(), states, key);
    }
  }
  return out;
}

}  // namespace

std::map<std::string, at::Tensor> read_mapped_archive(const std::string& path,
                                                      NestedArchives* nested) {
  if (!std::filesystem::exists(path)) throw Error("no checkpoint at '" + path + "'");
  const auto file = MappedFile::open(path);
  const std::string damaged = ". The file is damaged or not a t2t checkpoint.";
  try {
    return read_archive(file, nested);
  } catch (const Error& e) {
    throw Error("cannot read checkpoint '" + path + "': " + e.what() + damaged);
  } catch (const c10::Error& e) {
    throw Error("cannot read checkpoint '" + path + "': " + e.what_without_backtrace() + damaged);
  } catch (const std::bad_alloc&) {
    throw Error("cannot read checkpoint '" + path + "': it asks for more memory than there is" +
                damaged);
  } catch (const std::exception& e) {
    throw Error("cannot read checkpoint '" + path + "': " + e.what() + damaged);
  }
}

}  // namespace t2t
