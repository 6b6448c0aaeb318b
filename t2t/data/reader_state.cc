// ReaderState (reader_state.h) as YAML, and its checks before a resume.
#include "t2t/data/reader_state.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>

#include "t2t/core/error.h"

namespace t2t {

namespace {

void emit_addresses(YAML::Emitter& out, const char* key, const std::vector<RecordAddress>& v) {
  // Flattened file, record pairs: compact, and plain ints for any YAML reader.
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const RecordAddress& a : v) out << a.file << a.record;
  out << YAML::EndSeq;
}

std::vector<RecordAddress> parse_addresses(const YAML::Node& node, const char* key,
                                           const std::string& source) {
  std::vector<RecordAddress> out;
  if (!node) return out;
  if (!node.IsSequence() || node.size() % 2 != 0)
    throw Error("reader state " + source + ": '" + key +
                "' must be a flat list of file, record pairs");
  for (size_t i = 0; i < node.size(); i += 2)
    out.push_back({node[i].as<int64_t>(), node[i + 1].as<int64_t>()});
  return out;
}

}  // namespace

std::string ReaderState::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "epoch" << YAML::Value << epoch;
  out << YAML::Key << "file_position" << YAML::Value << file_position;
  out << YAML::Key << "record_in_file" << YAML::Value << record_in_file;
  out << YAML::Key << "rng" << YAML::Value << YAML::DoubleQuoted << rng;
  out << YAML::Key << "num_files" << YAML::Value << num_files;
  out << YAML::Key << "worker" << YAML::Value << worker;
  out << YAML::Key << "num_workers" << YAML::Value << num_workers;
  out << YAML::Key << "training" << YAML::Value << training;
  emit_addresses(out, "shuffle_buffer", shuffle_buffer);
  emit_addresses(out, "bucketed", bucketed);
  out << YAML::Key << "batch_rng" << YAML::Value << YAML::DoubleQuoted << batch_rng;
  emit_addresses(out, "batch_buffer", batch_buffer);
  out << YAML::Key << "batch_buffer_rows" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int64_t rows : batch_buffer_rows) out << rows;
  out << YAML::EndSeq;
  if (!mix.empty()) {
    out << YAML::Key << "mix" << YAML::Value << YAML::BeginSeq;
    for (const MixPosition& m : mix) {
      char weight[40];
      std::snprintf(weight, sizeof weight, "%.17g", m.weight);  // read back exactly
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "part" << YAML::Value << m.part
          << YAML::Key << "weight" << YAML::Value << weight << YAML::Key << "num_files"
          << YAML::Value << m.num_files << YAML::Key << "epoch" << YAML::Value << m.epoch
          << YAML::Key << "file_position" << YAML::Value << m.file_position << YAML::Key
          << "record_in_file" << YAML::Value << m.record_in_file << YAML::Key << "taken"
          << YAML::Value << m.taken << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ReaderState ReaderState::from_yaml(const std::string& yaml, const std::string& source) {
  ReaderState s;
  try {
    YAML::Node root = YAML::Load(yaml);
    if (!root.IsMap()) throw Error("reader state " + source + " is not a YAML mapping");
    auto need = [&](const char* key) {
      YAML::Node n = root[key];
      if (!n) throw Error("reader state " + source + " lacks '" + key + "'");
      return n;
    };
    s.epoch = need("epoch").as<int64_t>();
    s.file_position = need("file_position").as<int64_t>();
    s.record_in_file = need("record_in_file").as<int64_t>();
    s.rng = need("rng").as<std::string>();
    s.num_files = need("num_files").as<int64_t>();
    s.worker = need("worker").as<int64_t>();
    s.num_workers = need("num_workers").as<int64_t>();
    s.training = need("training").as<bool>();
    s.shuffle_buffer = parse_addresses(root["shuffle_buffer"], "shuffle_buffer", source);
    s.bucketed = parse_addresses(root["bucketed"], "bucketed", source);
    // States saved before batches were shuffled have none of these.
    if (YAML::Node n = root["batch_rng"]) s.batch_rng = n.as<std::string>();
    s.batch_buffer = parse_addresses(root["batch_buffer"], "batch_buffer", source);
    if (YAML::Node rows = root["batch_buffer_rows"]) {
      if (!rows.IsSequence())
        throw Error("reader state " + source + ": 'batch_buffer_rows' must be a list of counts");
      for (const auto& n : rows) s.batch_buffer_rows.push_back(n.as<int64_t>());
    }
    if (YAML::Node parts = root["mix"]) {
      if (!parts.IsSequence())
        throw Error("reader state " + source + ": 'mix' must be a list of the parts' positions");
      for (const auto& n : parts) {
        if (!n.IsMap()) throw Error("reader state " + source + ": a 'mix' entry is not a mapping");
        auto field = [&](const char* key) {
          YAML::Node v = n[key];
          if (!v) throw Error("reader state " + source + ": a 'mix' entry lacks '" + key + "'");
          return v;
        };
        MixPosition m;
        m.part = field("part").as<std::string>();
        m.weight = field("weight").as<double>();
        m.num_files = field("num_files").as<int64_t>();
        m.epoch = field("epoch").as<int64_t>();
        m.file_position = field("file_position").as<int64_t>();
        m.record_in_file = field("record_in_file").as<int64_t>();
        m.taken = field("taken").as<int64_t>();
        s.mix.push_back(std::move(m));
      }
    }
  } catch (const YAML::Exception& e) {
    throw Error("reader state " + source + " is not valid: " + e.what());
  }
  return s;
}

void ReaderState::check_belongs_to(int64_t reader_files, int64_t reader_worker,
                                   int64_t reader_workers, bool reader_training) const {
  auto mismatch = [](const std::string& what, int64_t state_value, int64_t ours) {
    if (state_value != ours)
      throw Error("reader state does not fit this reader: it has " + what + " " +
                  std::to_string(state_value) + ", the reader " + std::to_string(ours));
  };
  mismatch("num_files", num_files, reader_files);
  mismatch("worker", worker, reader_worker);
  mismatch("num_workers", num_workers, reader_workers);
  mismatch("training", training, reader_training);
}

void ReaderState::check_batch_rows() const {
  int64_t total = 0;
  for (int64_t n : batch_buffer_rows) {
    if (n < 1) throw Error("reader state does not fit this reader: a held batch of " +
                           std::to_string(n) + " rows");
    total += n;
  }
  if (total != static_cast<int64_t>(batch_buffer.size()))
    throw Error("reader state does not fit this reader: its held batches count " +
                std::to_string(total) + " rows but list " + std::to_string(batch_buffer.size()) +
                " addresses");
}

}  // namespace t2t
