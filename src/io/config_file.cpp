#include <attnlab/core/text.hpp>
#include <attnlab/io/config_file.hpp>

#include <toml++/toml.h>

#include <filesystem>
#include <stdexcept>

namespace attnlab::io {

namespace {

std::string toml_value(const toml::node& node, const std::string& key) {
  if (const auto* arr = node.as_array()) {
    std::string joined;
    for (const auto& item : *arr) joined += (joined.empty() ? "" : ",") + toml_value(item, key);
    return joined;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* f = node.as_floating_point()) return text(f->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  throw std::invalid_argument(text("config: key '", excerpt(key), "' has an unsupported type"));
}

}  // namespace

std::vector<std::string> config_arguments(const std::string& file, const CLI::App& app,
                                          const std::vector<std::string>& argv) {
  if (!std::filesystem::is_regular_file(file))
    throw std::invalid_argument(text("config: cannot read file '", file, "'"));
  toml::table table;
  try {
    table = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    // toml++ quotes the offending bytes, a newline among them
    throw std::invalid_argument(text("config: malformed TOML in ", file, " at line ", where.line, ": ",
                                     excerpt(std::string(e.description()), 160)));
  }
  std::vector<std::string> args;
  for (const auto& [k, node] : table) {
    const std::string key(k.str());
    const std::string flag = "--" + key;
    const auto* option = app.get_option_no_throw(flag);
    if (!option || key == "config")
      throw std::invalid_argument(text("config: unknown key '", excerpt(key), "' in ", file));
    bool on_command_line = false;
    for (const auto& a : argv) on_command_line |= a == flag || a.rfind(flag + "=", 0) == 0;
    if (on_command_line) continue;
    args.push_back(flag + "=" + toml_value(node, key));  // one argument: a value can never be read as a flag
  }
  return args;
}

}  // namespace attnlab::io
