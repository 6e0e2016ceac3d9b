// libFuzzer harness for the scenario loader: any input must end in a scenario or a UserError.
// Any other exception, a crash, a leak or a hang is a bug (ASan/UBSan/libFuzzer report it).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const cs::models::Scenario sc = cs::models::load_scenario_text(text, "fuzz.yaml");
    // Building the op graph checks references and cycles. Large expansions are valid input but
    // slow units, not bugs: keep each unit fast.
    int64_t ops = 0;
    for (const auto& s : sc.streams)
      for (const auto& op : s.ops) ops += (op.repeat + static_cast<int64_t>(op.after.size())) * s.gpus.size();
    if (sc.model) ops = static_cast<int64_t>(cs::models::model_workload_size(*sc.model).ops);
    if (ops <= 200'000) cs::models::build_op_workload(sc);
  } catch (const cs::hw::UserError&) {
  }
  return 0;
}
