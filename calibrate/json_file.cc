#include "calibrate/json_file.h"

#include <fstream>
#include <sstream>

#include "hw/user_error.h"
#include "hw/yaml_prescan.h"

namespace cs::calibrate {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hw::UserError(path, 0, 0, "cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b)
    throw hw::UserError(path, 0, 0, "a gzip file: unpack it first (gunzip)");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, col] = hw::position_of(text, e.byte > 0 ? e.byte - 1 : 0);
    throw hw::UserError(path, line, col, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace cs::calibrate
