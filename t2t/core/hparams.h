// Typed hyperparameters, as T2T's HParams: a flat, ordered set of named
// values whose type is fixed when the value is first added. Named sets are
// functions returning an HParams, registered with T2T_REGISTER_HPARAMS and
// free to start from one another (transformer_big calls transformer_base).
//
// Overrides keep T2T's syntax and precedence:
//   set < --hparams_file (YAML mapping) < --hparams ("a=1,b=0.2,c=[1,2]").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/registry.h"

namespace t2t {

using HValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;

// "int", "float", "bool", "string" or "list of ints".
std::string hvalue_type_name(const HValue& v);
// The value as T2T's --hparams syntax writes it; floats always carry a '.'
// or an exponent so that reading the text back gives the same type.
std::string hvalue_to_string(const HValue& v);

// Turns C++ literals into the right HValue alternative: without it a string
// literal would become a bool and an int literal would be ambiguous.
struct HArg {
  HValue value;
  HArg(int v) : value(int64_t{v}) {}
  HArg(long v) : value(int64_t{v}) {}
  HArg(long long v) : value(static_cast<int64_t>(v)) {}
  HArg(double v) : value(v) {}
  HArg(bool v) : value(v) {}
  HArg(const char* v) : value(std::string(v)) {}
  HArg(std::string v) : value(std::move(v)) {}
  HArg(std::vector<int64_t> v) : value(std::move(v)) {}
  HArg(HValue v) : value(std::move(v)) {}
};

class HParams {
 public:
  // Adds a new key; throws if it exists (use set() to change a value).
  HParams& add(const std::string& name, HArg value);
  // Changes an existing key to a value of the same type (an int is accepted
  // for a float). Throws naming the key, its type and the valid keys.
  HParams& set(const std::string& name, HArg value);
  // add() or set(), for sets that introduce or redefine keys freely.
  HParams& put(const std::string& name, HArg value);

  bool has(const std::string& name) const { return index_.count(name) > 0; }
  const HValue& value(const std::string& name) const;

  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;

  // Keys in the order they were added (the order logs and YAML use).
  std::vector<std::string> keys() const;
  size_t size() const { return entries_.size(); }

  // Applies "a=1,b=0.2,c=true,d=[1,2],d[0]=3"; `source` names where the text
  // came from, as the caller spells it ("--hparams" on a command line), for
  // error messages and override_source().
  HParams& parse(const std::string& overrides, const std::string& source = "hparams");
  // Applies the top-level mapping of a YAML file as overrides; `source` as
  // for parse(), "" for "hparams_file <path>".
  HParams& apply_yaml_file(const std::string& path, const std::string& source = "");
  HParams& apply_yaml_string(const std::string& yaml, const std::string& source);

  // A YAML mapping, one key a line, in key order.
  std::string to_yaml() const;
  // Reads what to_yaml() wrote: types come from the YAML scalars (a float
  // carries a '.' or exponent, a list is a sequence of ints).
  static HParams from_yaml_file(const std::string& path);
  static HParams from_yaml_string(const std::string& yaml, const std::string& source);

  // Whether parse() or apply_yaml_*() (the command line's --hparams and
  // --hparams_file) changed `name` to a value other than the one it held
  // before them: the set's, or a saved run's. Lets a check tell a value the
  // user asked for from one every set inherits. Copies keep it; YAML does not.
  bool overridden(const std::string& name) const;
  // Where the last such change of `name` came from, as its source was given
  // ("--hparams", "--hparams_file f.yaml" from a command line); "" when none.
  std::string override_source(const std::string& name) const;

  // Keys whose values differ, plus keys present on one side only, each as
  // "name: this -> other"; empty when equal.
  std::vector<std::string> diff(const HParams& other) const;

  // Writes to_yaml() to `path` atomically (temp file, then rename).
  void save_yaml(const std::string& path) const;

 private:
  HValue converted(const std::string& name, const HValue& current, const HValue& incoming,
                   const std::string& source) const;
  [[noreturn]] void unknown_key(const std::string& name, const std::string& source) const;
  // Notes the value `name` holds before an override from `source` changes it.
  void remember_before_override(const std::string& name, const std::string& source);
  // apply_yaml_string and from_yaml_string, which turn yaml-cpp's
  // exceptions into t2t::Error.
  HParams& apply_yaml_nodes(const std::string& yaml, const std::string& source);
  static HParams from_yaml_nodes(const std::string& yaml, const std::string& source);
  std::vector<std::pair<std::string, HValue>> entries_;
  std::map<std::string, size_t> index_;
  struct Override {
    HValue before;       // the value before the first override
    std::string source;  // where the last one came from
  };
  std::map<std::string, Override> overrides_;
};

using HParamsFn = std::function<HParams()>;
Registry<HParamsFn>& hparams_registry();

// Resolves what a front end asks for (options hparams_set, hparams_file and
// hparams): the named set, then the YAML file (if any), then the overrides
// (if any). `spell` writes the options' names in the sources the overrides
// are recorded with (override_source); null: as named. Throws OptionError
// naming hparams_set when set_name is empty.
HParams resolve_hparams(const std::string& set_name, const std::string& hparams_file,
                        const std::string& overrides, const OptionSpelling& spell = nullptr);

}  // namespace t2t

// Registers `fn` (a function returning HParams) under its own name, as T2T's
// @registry.register_hparams does.
#define T2T_REGISTER_HPARAMS(fn)                                                   \
  static ::t2t::Registrar<::t2t::HParamsFn> T2T_CONCAT(t2t_hparams_registrar_, fn)( \
      ::t2t::hparams_registry(), #fn, ::t2t::HParamsFn(fn), {#fn, __FILE__})
