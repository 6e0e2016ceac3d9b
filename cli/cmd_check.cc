#include <iostream>

#include "cli/commands.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"

namespace cs::cli {

int cmd_check(const std::vector<std::string>& files, int64_t graph_limit) {
  int bad = 0;
  for (const std::string& f : files) {
    try {
      const models::Scenario sc = models::load_scenario_file(f, graph_limits(graph_limit));
      const models::OpWorkload w = models::build_op_workload(sc);
      std::cout << f << ": ok ('" << sc.name << "', " << sc.cluster.gpus << " GPUs, " << w.graph.ops().size()
                << " ops)\n";
    } catch (const hw::UserError& e) {
      std::cerr << e.what() << "\n";
      ++bad;
    }
  }
  check_stdout();
  return bad ? 2 : 0;
}

}  // namespace cs::cli
