#include <iostream>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/sm_sweep.h"
#include "reports/atomic_file.h"
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
  // An unwritable output fails before the runs, and is replaced only once the result is complete.
  std::optional<reports::AtomicFile> out;
  if (!args.out.empty()) out.emplace(args.out);

  std::cerr << "clustersim: sweeping '" << sc.name << "' over " << spec.comm_sms.size()
            << " communication partition sizes (" << spec.jobs << " at once)\n";
  const models::SmSweep sweep = models::run_sm_sweep(sc, spec);
  const auto& first = sweep.points.front().result;
  if (!first.calibrated) std::cerr << "clustersim: warning: costs are uncalibrated (" << first.cost_model << ")\n";

  const std::string text = args.format == "json" ? reports::sweep_json(sc, sweep, version()).dump(2) + "\n"
                                                 : reports::sweep_console(sc, sweep);
  if (!out) {
    std::cout << text;
    check_stdout();
    return 0;
  }
  out->stream() << text;
  out->finish_writing();
  out->commit();
  std::cerr << "clustersim: wrote " << args.out << "\n";
  return 0;
}

}  // namespace cs::cli
