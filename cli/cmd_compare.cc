// clustersim compare SCENARIO --measured RUN: the scenario's simulated kernels against a measured
// run: a Kineto trace or cs_overlap output class by class (calibrate/compare_run.h), our pipeline
// bench's output task by task (calibrate/compare_pipeline.h).
#include <iostream>

#include <nlohmann/json.hpp>

#include "calibrate/compare_pipeline.h"
#include "calibrate/compare_run.h"
#include "calibrate/kineto_trace.h"
#include "cli/commands.h"
#include "hw/user_error.h"
#include "models/scenario_loader.h"

namespace cs::cli {

int cmd_compare(const CompareArgs& args) {
  const models::Scenario sc = models::load_scenario_file(args.scenario);
  std::cerr << "clustersim: comparing '" << sc.name << "' with " << args.measured << "\n";
  std::string out;
  try {
    // Our pipeline bench lines up task by task; kernel traces and the overlap bench class by class.
    if (calibrate::measured_format(args.measured) == "pipeline_step") {
      const calibrate::PipelineCompare r = calibrate::compare_pipeline(sc, args.measured);
      out = args.format == "json" ? calibrate::pipeline_compare_json(r).dump(2) + "\n"
                                  : calibrate::pipeline_compare_console(r);
    } else {
      const calibrate::CompareReport r = calibrate::compare_scenario(sc, args.measured);
      out = args.format == "json" ? calibrate::compare_json(r).dump(2) + "\n" : calibrate::compare_console(r);
    }
  } catch (const nlohmann::json::exception& e) {
    throw hw::UserError(args.measured, 0, 0, std::string("unexpected JSON content: ") + e.what());
  }
  std::cout << out;
  check_stdout();
  return 0;
}

}  // namespace cs::cli
