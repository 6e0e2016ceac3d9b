// clustersim compare SCENARIO --measured RUN: the scenario's simulated kernels against a measured
// run (a Kineto trace or cs_overlap output), class by class (calibrate/compare_run.h).
#include <iostream>

#include <nlohmann/json.hpp>

#include "calibrate/compare_run.h"
#include "cli/commands.h"
#include "hw/user_error.h"
#include "models/scenario_loader.h"

namespace cs::cli {

int cmd_compare(const CompareArgs& args) {
  const models::Scenario sc = models::load_scenario_file(args.scenario);
  std::cerr << "clustersim: comparing '" << sc.name << "' with " << args.measured << "\n";
  calibrate::CompareReport r;
  try {
    r = calibrate::compare_scenario(sc, args.measured);
  } catch (const nlohmann::json::exception& e) {
    throw hw::UserError(args.measured, 0, 0, std::string("unexpected JSON content: ") + e.what());
  }
  std::cout << (args.format == "json" ? calibrate::compare_json(r).dump(2) + "\n" : calibrate::compare_console(r));
  check_stdout();
  return 0;
}

}  // namespace cs::cli
