#include <iostream>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/run_document.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/sm_sweep.h"
#include "reports/atomic_file.h"
#include "reports/html_report.h"
#include "reports/sweep_report.h"

namespace cs::cli {

int cmd_sweep(const SweepArgs& args) {
  const models::Scenario sc = models::load_scenario_file(args.file);
  models::SmSweepSpec spec;
  spec.comm_sms = models::parse_int_range(args.comm_sms, "--comm-sms");
  spec.comm_partition = args.comm_partition;
  spec.compute_partition = args.compute_partition;
  spec.training = !args.no_training;
  spec.jobs = args.jobs > 0 ? args.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!args.out.empty() && !args.report.empty() && same_file(args.out, args.report))
    throw hw::UserError(args.report, 0, 0, "--report names the same file as --out");
  // An unwritable output fails before the runs, and is replaced only once the result is complete.
  std::optional<reports::AtomicFile> out, report;
  if (!args.out.empty()) out.emplace(args.out);
  if (!args.report.empty()) report.emplace(args.report);

  std::cerr << "clustersim: sweeping '" << sc.name << "' over " << spec.comm_sms.size()
            << " communication partition sizes (" << spec.jobs << " at once)\n";
  const models::SmSweep sweep = models::run_sm_sweep(sc, spec);
  const auto& first = sweep.points.front().result;
  if (!first.calibrated) std::cerr << "clustersim: warning: costs are uncalibrated (" << first.cost_model << ")\n";

  const std::string text = args.format == "json" ? reports::sweep_json(sc, sweep, version()).dump(2) + "\n"
                                                 : reports::sweep_console(sc, sweep);
  if (report) {
    // The page is the scenario's own split, run once more with its timeline captured, and the
    // sweep's curve beside it.
    std::cerr << "clustersim: running the scenario's own split for the report\n";
    RunDocument d = run_document(sc, models::build_op_workload(sc), args.file, args.argv, true);
    d.document["report"]["sweep"] = reports::sweep_chart(sweep);
    report->stream() << reports::render_html(d.document);
    report->finish_writing();
  }
  if (out) {
    out->stream() << text;
    out->finish_writing();
  } else {
    std::cout << text;
    check_stdout();
  }
  if (out) out->commit();
  if (report) report->commit();
  if (out) std::cerr << "clustersim: wrote " << args.out << "\n";
  if (report) std::cerr << "clustersim: wrote report " << args.report << " (open it in a browser)\n";
  return 0;
}

}  // namespace cs::cli
