// A measurement file read as JSON, with the parser's error placed at its line and column.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cs::calibrate {

// Throws hw::UserError: unreadable ("cannot read the file"), gzip-compressed (unpack it first), or
// not JSON (at file:line:col).
nlohmann::json read_json_file(const std::string& path);

}  // namespace cs::calibrate
