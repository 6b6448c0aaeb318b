#include "t2t/core/error.h"

namespace t2t {

namespace {

std::string render_names(const std::string& message, const OptionSpelling& spell) {
  std::string out;
  out.reserve(message.size() + 16);
  for (size_t i = 0; i < message.size();) {
    const size_t close = message[i] == '{' ? message.find('}', i + 1) : std::string::npos;
    // A name is letters, digits and underscores: any other brace is text.
    bool is_name = close != std::string::npos && close > i + 1;
    for (size_t j = i + 1; is_name && j < close; ++j) {
      const char c = message[j];
      is_name = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_';
    }
    if (!is_name) {
      out += message[i++];
      continue;
    }
    const std::string name = message.substr(i + 1, close - i - 1);
    out += spell ? spell(name) : name;
    i = close + 1;
  }
  return out;
}

}  // namespace

OptionError::OptionError(std::string option, std::string message)
    : Error(render_names(message, nullptr)),
      option_(std::move(option)),
      message_(std::move(message)) {}

std::string OptionError::render(const OptionSpelling& spell) const {
  return render_names(message_, spell);
}

std::string option_message(const std::exception& e) {
  if (const auto* option = dynamic_cast<const OptionError*>(&e)) return option->message_template();
  return e.what();
}

std::string command_suggestion(const std::string& tool,
                               const std::vector<std::pair<std::string, std::string>>& flags) {
  std::string out = tool;
  for (const auto& [name, value] : flags) out += " --" + name + (value.empty() ? "" : "=" + value);
  return out;
}

}  // namespace t2t
