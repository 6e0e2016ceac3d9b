// Reads one catalog figure written as {value, source}: the source must be non-empty, and is kept.
#pragma once

#include <map>
#include <string>

#include "hw/yaml_reader.h"

namespace cs::hw {

inline double catalog_figure(const YamlMap& m, const std::string& key, std::map<std::string, std::string>& sources) {
  const YamlMap f(m.required(key), {"value", "source"});
  const std::string source = f.required("source").as_string();
  if (source.empty()) f.required("source").fail("a figure's source cannot be empty");
  sources[key] = source;
  return f.required("value").as_double(0, 1e9, true);
}

}  // namespace cs::hw
