// The exceptions t2t throws for user-facing problems: bad options, bad
// files, unknown names. A message is meant to be printed as is, so it names
// the option, file or value at fault and says what to do.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// How a front end writes an option's name: "--quantize" on a command line,
// "quantize" in Python, "\"n_best\"" in a JSON request.
using OptionSpelling = std::function<std::string(const std::string& option)>;

// A value of one of the library's options that it cannot take. The library
// names options as it knows them (quantize, beam_size, device), never as a
// front end spells them: the message is a template in which "{name}" stands
// for an option, and each front end renders it with its own spelling.
// what() renders the bare names.
class OptionError : public Error {
 public:
  // `option`: the option at fault; `message`: what is wrong and what to do,
  // naming options as "{option}" (e.g. "{quantize}=int8 runs on the CPU
  // only: use {device}=cpu").
  OptionError(std::string option, std::string message);

  const std::string& option() const { return option_; }
  // The message as given, its "{name}"s unrendered: for a caller that adds
  // context and throws it on as an OptionError.
  const std::string& message_template() const { return message_; }
  // The message with every "{name}" written as spell(name).
  std::string render(const OptionSpelling& spell) const;

 private:
  std::string option_;
  std::string message_;
};

// The message of `e` for another OptionError's message to quote: an
// OptionError's template, so that the front end still spells its names;
// what() of any other error.
std::string option_message(const std::exception& e);

// A command for the user to run, written as typed on a command line:
// `tool` then "--name=value" for each of `flags` ("--name" for an empty
// value), e.g. "t2t-datagen --problem=P --data_dir=D". A message that says
// which command to run names a tool's flags, not the library's options.
std::string command_suggestion(const std::string& tool,
                               const std::vector<std::pair<std::string, std::string>>& flags);

}  // namespace t2t
