#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/run_document.h"
#include "clustersim/version.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "reports/atomic_file.h"
#include "reports/html_report.h"
#include "reports/run_report.h"

namespace cs::cli {

const char* version() { return CLUSTERSIM_VERSION_STRING; }

// Standard output that cannot take the result (a full disk, a closed pipe) must not exit 0.
void check_stdout() {
  std::cout.flush();
  if (!std::cout) throw hw::UserError("<stdout>", 0, 0, "cannot write the result (disk full or closed pipe?)");
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec_a, ec_b;
  const fs::path ca = fs::weakly_canonical(a, ec_a), cb = fs::weakly_canonical(b, ec_b);
  if (!ec_a && !ec_b) return ca == cb;
  return fs::absolute(a, ec_a).lexically_normal() == fs::absolute(b, ec_b).lexically_normal();
}

models::GraphLimits graph_limits(int64_t graph_limit) {
  return graph_limit > 0 ? models::GraphLimits{graph_limit, graph_limit} : models::GraphLimits{};
}

int cmd_run(const RunArgs& args) {
  if (!args.out.empty() && !args.trace.empty() && same_file(args.out, args.trace))
    throw hw::UserError(args.out, 0, 0, "--out and --trace name the same file");
  for (const std::string* other : {&args.out, &args.trace})
    if (!args.report.empty() && !other->empty() && same_file(args.report, *other))
      throw hw::UserError(args.report, 0, 0, "--report names the same file as --out or --trace");
  const models::Scenario sc = models::load_scenario_file(args.file, graph_limits(args.graph_limit));
  const models::OpWorkload work = models::build_op_workload(sc);
  // Open the outputs before the run so that an unwritable path fails at once, and write them by
  // rename only after everything succeeded.
  std::optional<reports::AtomicFile> out, trace, report;
  if (!args.out.empty()) out.emplace(args.out);
  if (!args.trace.empty()) trace.emplace(args.trace);
  if (!args.report.empty()) report.emplace(args.report);

  std::cerr << "clustersim: running '" << sc.name << "' (" << sc.cluster.gpus << " x " << sc.cluster.gpu.name
            << ", " << work.stream_names.size() << " streams, " << work.graph.ops().size() << " ops)\n";
  // A JSON result carries what the HTML report needs, so that `clustersim report` can render it later.
  const bool capture = report || args.format == "json";
  const RunDocument d = run_document(sc, work, args.file, args.argv, capture, trace ? &trace->stream() : nullptr);
  const models::RunResult& r = d.result;
  // A file name or argument that is not UTF-8 is written with U+FFFD in its place.
  const std::string json_text =
      capture ? d.document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : "";
  const std::string text = args.format == "json" ? json_text : reports::result_console(r);
  if (out) out->stream() << text;
  // The page is rendered from the JSON text, as `clustersim report` renders it from the file: the
  // same bytes either way.
  if (report) report->stream() << reports::render_html(nlohmann::json::parse(json_text));
  // Every output is fully written before any is renamed into place.
  if (out) out->finish_writing();
  if (trace) trace->finish_writing();
  if (report) report->finish_writing();
  if (!out) {
    std::cout << text;
    check_stdout();
  }
  if (out) out->commit();
  if (trace) trace->commit();
  if (report) report->commit();
  if (out) std::cerr << "clustersim: wrote " << args.out << "\n";
  if (trace) std::cerr << "clustersim: wrote trace " << args.trace << " (open it in ui.perfetto.dev)\n";
  if (report) std::cerr << "clustersim: wrote report " << args.report << " (open it in a browser)\n";
  return 0;
}

}  // namespace cs::cli
