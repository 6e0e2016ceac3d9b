// clustersim report RESULT.json -o OUT.html: the HTML report of a saved run.
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "hw/user_error.h"
#include "reports/atomic_file.h"
#include "reports/html_report.h"
#include "reports/run_report.h"

namespace cs::cli {

namespace {

constexpr std::streamoff kMaxResultBytes = 512LL << 20;  // a 2048-GPU result is a few MB

nlohmann::json read_result(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hw::UserError(path, 0, 0, "cannot open the result file");
  std::ostringstream ss;
  if (!(ss << in.rdbuf()) || in.bad()) throw hw::UserError(path, 0, 0, "cannot read the result file (a directory?)");
  if (ss.tellp() > kMaxResultBytes) throw hw::UserError(path, 0, 0, "the result file is larger than 512 MiB");
  nlohmann::json doc = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    throw hw::UserError(path, 0, 0, "not a clustersim result (expected the JSON object of clustersim run --format json)");
  const auto v = doc.find("schema_version");
  if (v == doc.end() || !v->is_number_integer())
    throw hw::UserError(path, 0, 0, "not a clustersim result: no schema_version");
  if (v->get<int64_t>() != reports::kResultSchemaVersion)
    throw hw::UserError(path, 0, 0,
                        "result schema_version " + std::to_string(v->get<int64_t>()) + "; this clustersim reads " +
                            std::to_string(reports::kResultSchemaVersion) +
                            " (run the scenario again with clustersim run --format json)");
  if (!doc.contains("report") || !doc["report"].is_object())
    throw hw::UserError(path, 0, 0, "the result has no `report` object (write it with clustersim run --format json)");
  return doc;
}

}  // namespace

int cmd_report(const std::string& result_file, const std::string& out_path) {
  if (same_file(result_file, out_path))
    throw hw::UserError(out_path, 0, 0, "-o names the result file itself; the report would replace it");
  const nlohmann::json doc = read_result(result_file);
  reports::AtomicFile out(out_path);
  std::string html;
  try {
    html = reports::render_html(doc);
  } catch (const nlohmann::json::exception& e) {
    throw hw::UserError(result_file, 0, 0, std::string("a malformed result: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw hw::UserError(result_file, 0, 0, std::string("a malformed result: ") + e.what());
  }
  out.stream() << html;
  out.finish_writing();
  out.commit();
  std::cerr << "clustersim: wrote report " << out_path << " (open it in a browser)\n";
  return 0;
}

}  // namespace cs::cli
