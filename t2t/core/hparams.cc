#include "t2t/core/hparams.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "t2t/core/file_util.h"

namespace t2t {

namespace {

bool parse_int(const std::string& text, int64_t* out) {
  std::string t = trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse_float(const std::string& text, double* out) {
  std::string t = trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

bool parse_bool(const std::string& text, bool* out) {
  std::string t = to_lower(trim(text));
  if (t == "true" || t == "1") return *out = true, true;
  if (t == "false" || t == "0") return *out = false, true;
  return false;
}

bool parse_int_list(const std::string& text, std::vector<int64_t>* out) {
  std::string t = trim(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return false;
  std::string inner = trim(t.substr(1, t.size() - 2));
  out->clear();
  if (inner.empty()) return true;
  for (const auto& part : split(inner, ',')) {
    int64_t v;
    if (!parse_int(part, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// Shortest decimal text that reads back as exactly `v`, with a '.' or an
// exponent so the type survives a round trip.
std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// Splits "a=1,b=[1,2],c=x" at the commas outside brackets.
std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// "[a,b,c]". Appending in place also sidesteps a GCC 12 -O3 false
// -Wstringop-overflow on `"[" + join(...) + "]"`.
std::string bracketed(const std::vector<std::string>& parts) {
  std::string out = "[";
  out += join(parts, ",");
  out += ']';
  return out;
}

bool valid_name(const std::string& n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

std::string hvalue_type_name(const HValue& v) {
  switch (v.index()) {
    case 0: return "int";
    case 1: return "float";
    case 2: return "bool";
    case 3: return "string";
    default: return "list of ints";
  }
}

std::string hvalue_to_string(const HValue& v) {
  switch (v.index()) {
    case 0: return std::to_string(std::get<int64_t>(v));
    case 1: return float_text(std::get<double>(v));
    case 2: return std::get<bool>(v) ? "true" : "false";
    case 3: return std::get<std::string>(v);
    default: {
      std::vector<std::string> parts;
      for (int64_t x : std::get<std::vector<int64_t>>(v)) parts.push_back(std::to_string(x));
      return bracketed(parts);
    }
  }
}

HParams& HParams::add(const std::string& name, HArg arg) {
  HValue& value = arg.value;
  if (!valid_name(name)) throw Error("invalid hyperparameter name '" + name + "'");
  if (has(name)) throw Error("hyperparameter '" + name + "' is already defined; use set()");
  index_[name] = entries_.size();
  entries_.emplace_back(name, std::move(value));
  return *this;
}

HParams& HParams::put(const std::string& name, HArg arg) {
  if (has(name)) {
    entries_[index_.at(name)].second = std::move(arg.value);
    return *this;
  }
  return add(name, std::move(arg));
}

void HParams::unknown_key(const std::string& name, const std::string& source) const {
  std::string msg = "unknown hyperparameter '" + name + "' (from " + source + ").";
  auto near = close_matches(name, keys());
  if (!near.empty()) msg += " Did you mean " + join(near, ", ") + "?";
  msg += " Valid keys: " + join(keys(), ", ");
  throw Error(msg);
}

HValue HParams::converted(const std::string& name, const HValue& current, const HValue& incoming,
                          const std::string& source) const {
  if (current.index() == incoming.index()) return incoming;
  if (current.index() == 1 && incoming.index() == 0)
    return static_cast<double>(std::get<int64_t>(incoming));
  throw Error("hyperparameter '" + name + "' (from " + source + ") expects " +
              hvalue_type_name(current) + ", got " + hvalue_type_name(incoming) + " " +
              hvalue_to_string(incoming));
}

HParams& HParams::set(const std::string& name, HArg arg) {
  if (!has(name)) unknown_key(name, "code");
  auto& slot = entries_[index_.at(name)].second;
  slot = converted(name, slot, arg.value, "code");
  return *this;
}

const HValue& HParams::value(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) unknown_key(name, "a lookup");
  return entries_[it->second].second;
}

namespace {
template <typename T>
const T& typed(const HParams& hp, const std::string& name, const char* want) {
  const HValue& v = hp.value(name);
  if (auto p = std::get_if<T>(&v)) return *p;
  throw Error("hyperparameter '" + name + "' is " + hvalue_type_name(v) + ", read as " + want);
}
}  // namespace

int64_t HParams::get_int(const std::string& n) const { return typed<int64_t>(*this, n, "int"); }
double HParams::get_float(const std::string& n) const {
  const HValue& v = value(n);
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  return typed<double>(*this, n, "float");
}
bool HParams::get_bool(const std::string& n) const { return typed<bool>(*this, n, "bool"); }
const std::string& HParams::get_string(const std::string& n) const {
  return typed<std::string>(*this, n, "string");
}
const std::vector<int64_t>& HParams::get_ints(const std::string& n) const {
  return typed<std::vector<int64_t>>(*this, n, "list of ints");
}

void HParams::remember_before_override(const std::string& name, const std::string& source) {
  auto it = overrides_.find(name);
  if (it == overrides_.end()) it = overrides_.emplace(name, Override{value(name), ""}).first;
  it->second.source = source;
}

bool HParams::overridden(const std::string& name) const {
  auto it = overrides_.find(name);
  return it != overrides_.end() && it->second.before != value(name);
}

std::string HParams::override_source(const std::string& name) const {
  return overridden(name) ? overrides_.at(name).source : std::string();
}

std::vector<std::string> HParams::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.first);
  return out;
}

namespace {
// Parses `text` as a value of the same type as `like`.
bool parse_as(const HValue& like, const std::string& text, HValue* out) {
  switch (like.index()) {
    case 0: { int64_t v; if (!parse_int(text, &v)) return false; *out = v; return true; }
    case 1: { double v; if (!parse_float(text, &v)) return false; *out = v; return true; }
    case 2: { bool v; if (!parse_bool(text, &v)) return false; *out = v; return true; }
    case 3: *out = trim(text); return true;
    default: {
      std::vector<int64_t> v;
      if (!parse_int_list(text, &v)) return false;
      *out = v;
      return true;
    }
  }
}
}  // namespace

HParams& HParams::parse(const std::string& overrides, const std::string& source) {
  if (trim(overrides).empty()) return *this;
  for (const auto& raw : split_top_level(overrides)) {
    std::string item = trim(raw);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw Error("malformed " + source + " entry '" + item + "': expected name=value, e.g. " +
                  "'batch_size=2048,learning_rate=0.1'");
    std::string name = trim(item.substr(0, eq));
    std::string text = item.substr(eq + 1);
    long index = -1;
    size_t lb = name.find('[');
    if (lb != std::string::npos) {
      int64_t idx;
      if (name.back() != ']' || !parse_int(name.substr(lb + 1, name.size() - lb - 2), &idx) ||
          idx < 0)
        throw Error("malformed index in " + source + " entry '" + item + "'");
      index = static_cast<long>(idx);
      name = name.substr(0, lb);
    }
    if (!has(name)) unknown_key(name, source);
    remember_before_override(name, source);
    HValue& slot = entries_[index_.at(name)].second;
    if (index >= 0) {
      auto* list = std::get_if<std::vector<int64_t>>(&slot);
      if (!list)
        throw Error("hyperparameter '" + name + "' (from " + source + ") is " +
                    hvalue_type_name(slot) + ", not a list: it cannot be indexed");
      if (static_cast<size_t>(index) >= list->size())
        throw Error("index " + std::to_string(index) + " out of range for '" + name +
                    "', which has " + std::to_string(list->size()) + " elements");
      int64_t v;
      if (!parse_int(text, &v))
        throw Error("hyperparameter '" + name + "[" + std::to_string(index) + "]' (from " +
                    source + ") expects an int, got '" + trim(text) + "'");
      (*list)[index] = v;
      continue;
    }
    HValue parsed;
    if (!parse_as(slot, text, &parsed))
      throw Error("hyperparameter '" + name + "' (from " + source + ") expects " +
                  hvalue_type_name(slot) + ", got '" + trim(text) + "'");
    slot = parsed;
  }
  return *this;
}

namespace {

YAML::Node load_yaml(const std::string& yaml, const std::string& source) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw Error("cannot parse YAML in " + source + ": " + e.what());
  }
}

std::string scalar_text(const YAML::Node& node) {
  if (node.IsSequence()) {
    std::vector<std::string> parts;
    for (const auto& item : node) parts.push_back(item.as<std::string>());
    return bracketed(parts);
  }
  return node.as<std::string>();
}

}  // namespace

HParams& HParams::apply_yaml_string(const std::string& yaml, const std::string& source) {
  try {
    return apply_yaml_nodes(yaml, source);
  } catch (const YAML::Exception& e) {
    // A key or value of a kind no hyperparameter takes (a tagged or nested node).
    throw Error("cannot read hyperparameters from " + source + ": " + e.what());
  }
}

HParams& HParams::apply_yaml_nodes(const std::string& yaml, const std::string& source) {
  YAML::Node root = load_yaml(yaml, source);
  if (root.IsNull()) return *this;
  if (!root.IsMap())
    throw Error(source + " must be a YAML mapping of hyperparameter names to values");
  for (const auto& kv : root) {
    const std::string name = kv.first.as<std::string>();
    if (!has(name)) unknown_key(name, source);
    remember_before_override(name, source);
    HValue& slot = entries_[index_.at(name)].second;
    if (kv.second.IsMap() || kv.second.IsNull())
      throw Error("hyperparameter '" + name + "' (from " + source + ") expects " +
                  hvalue_type_name(slot) + ", got " + (kv.second.IsMap() ? "a mapping" : "nothing"));
    if (kv.second.IsSequence() && slot.index() != 4)
      throw Error("hyperparameter '" + name + "' (from " + source + ") expects " +
                  hvalue_type_name(slot) + ", got a list");
    const std::string text = scalar_text(kv.second);
    HValue parsed;
    if (!parse_as(slot, text, &parsed))
      throw Error("hyperparameter '" + name + "' (from " + source + ") expects " +
                  hvalue_type_name(slot) + ", got '" + text + "'");
    slot = parsed;
  }
  return *this;
}

HParams& HParams::apply_yaml_file(const std::string& path, const std::string& source) {
  return apply_yaml_string(read_file(path), source.empty() ? "hparams_file " + path : source);
}

std::string HParams::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& [name, v] : entries_) {
    out << YAML::Key << name << YAML::Value;
    switch (v.index()) {
      case 0: out << std::get<int64_t>(v); break;
      case 1: out << float_text(std::get<double>(v)); break;
      case 2: out << (std::get<bool>(v) ? "true" : "false"); break;
      case 3: out << YAML::DoubleQuoted << std::get<std::string>(v); break;
      default:
        out << YAML::Flow << YAML::BeginSeq;
        for (int64_t x : std::get<std::vector<int64_t>>(v)) out << x;
        out << YAML::EndSeq;
    }
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

HParams HParams::from_yaml_string(const std::string& yaml, const std::string& source) {
  try {
    return from_yaml_nodes(yaml, source);
  } catch (const YAML::Exception& e) {
    throw Error("cannot read hyperparameters from " + source + ": " + e.what());
  }
}

HParams HParams::from_yaml_nodes(const std::string& yaml, const std::string& source) {
  YAML::Node root = load_yaml(yaml, source);
  HParams hp;
  if (root.IsNull()) return hp;
  if (!root.IsMap()) throw Error(source + " must be a YAML mapping of hyperparameter names");
  for (const auto& kv : root) {
    const std::string name = kv.first.as<std::string>();
    const YAML::Node& node = kv.second;
    if (node.IsSequence()) {
      std::vector<int64_t> list;
      if (!parse_int_list(scalar_text(node), &list))
        throw Error("hyperparameter '" + name + "' in " + source + " is a list of non-integers");
      hp.add(name, list);
      continue;
    }
    if (!node.IsScalar()) throw Error("hyperparameter '" + name + "' in " + source + " is not a value");
    const std::string text = node.Scalar();
    // A quoted scalar is a string whatever it looks like.
    if (node.Tag() == "!") {
      hp.add(name, text);
      continue;
    }
    int64_t i;
    double f;
    if (text == "true" || text == "false") hp.add(name, text == "true");
    else if (parse_int(text, &i)) hp.add(name, i);
    else if (parse_float(text, &f)) hp.add(name, f);
    else hp.add(name, text);
  }
  return hp;
}

HParams HParams::from_yaml_file(const std::string& path) {
  return from_yaml_string(read_file(path), path);
}

void HParams::save_yaml(const std::string& path) const { write_file_atomic(path, to_yaml()); }

std::vector<std::string> HParams::diff(const HParams& other) const {
  std::vector<std::string> out;
  for (const auto& [name, v] : entries_) {
    if (!other.has(name)) {
      out.push_back(name + ": " + hvalue_to_string(v) + " -> (absent)");
    } else if (other.value(name) != v) {
      out.push_back(name + ": " + hvalue_to_string(v) + " -> " + hvalue_to_string(other.value(name)));
    }
  }
  for (const auto& name : other.keys())
    if (!has(name)) out.push_back(name + ": (absent) -> " + hvalue_to_string(other.value(name)));
  return out;
}

Registry<HParamsFn>& hparams_registry() {
  static Registry<HParamsFn> registry("hparams set");
  return registry;
}

HParams resolve_hparams(const std::string& set_name, const std::string& hparams_file,
                        const std::string& overrides, const OptionSpelling& spell) {
  if (set_name.empty())
    throw OptionError("hparams_set", "{hparams_set} is required, e.g. "
                                     "{hparams_set}=transformer_base ({registry_help} lists them)");
  const auto name = [&spell](const std::string& option) { return spell ? spell(option) : option; };
  HParams hp = hparams_registry().get(set_name)();
  if (!hparams_file.empty())
    hp.apply_yaml_file(hparams_file, name("hparams_file") + " " + hparams_file);
  hp.parse(overrides, name("hparams"));
  return hp;
}

}  // namespace t2t
