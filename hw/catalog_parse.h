// What every catalog reader shares: figures written as {value, source}, and loading one folder of
// the compiled-in YAML files, sorted by name. A malformed built-in file is an internal error.
#pragma once

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/embedded_catalog.h"
#include "hw/yaml_reader.h"

namespace cs::hw {

// Reads one figure: the source must be non-empty, and is kept in `sources` under `key`.
inline double catalog_figure(const YamlMap& m, const std::string& key, std::map<std::string, std::string>& sources) {
  const YamlMap f(m.required(key), {"value", "source"});
  const std::string source = f.required("source").as_string();
  if (source.empty()) f.required("source").fail("a figure's source cannot be empty");
  sources[key] = source;
  return f.required("value").as_double(0, 1e9, true);
}

// Parses every file under `folder` (e.g. "hw/nics/") with `parse(root)`, sorted by `name`.
template <typename T, typename Parse>
std::vector<T> load_catalog_folder(const char* folder, Parse parse) {
  std::vector<T> out;
  try {
    for (const EmbeddedFile& f : embedded_catalog_files())
      if (f.path.rfind(folder, 0) == 0) out.push_back(parse(parse_yaml(f.text, std::string(f.path))));
  } catch (const UserError& e) {
    throw std::logic_error(std::string("built-in hardware catalog is malformed: ") + e.what());
  }
  std::sort(out.begin(), out.end(), [](const T& a, const T& b) { return a.name < b.name; });
  return out;
}

}  // namespace cs::hw
