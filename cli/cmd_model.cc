#include <iostream>

#include "cli/commands.h"
#include "hw/user_error.h"
#include "models/model_zoo.h"
#include "reports/model_report.h"

namespace cs::cli {

int cmd_model_list() {
  std::cout << reports::model_list();
  check_stdout();
  return 0;
}

int cmd_model_show(const ModelShowArgs& a) {
  const models::ModelSpec m = models::load_model(a.name);
  const auto bad = [&](const std::string& msg) { throw hw::UserError("clustersim model show", 0, 0, msg); };
  if (m.attention.heads % a.tp != 0 || m.ffn.hidden % a.tp != 0)
    bad("--tp " + std::to_string(a.tp) + " must divide the " + std::to_string(m.attention.heads) +
        " heads and the FFN width " + std::to_string(m.ffn.hidden) + " of " + m.name);
  if (m.moe && m.moe->routed_experts % a.ep != 0)
    bad("--ep " + std::to_string(a.ep) + " must divide the " + std::to_string(m.moe->routed_experts) +
        " routed experts of " + m.name);
  if (!m.moe && a.ep != 1) bad("--ep applies to MoE models only; " + m.name + " is dense");
  reports::ModelShowOptions o;
  o.seq_len = a.seq_len;
  o.micro_batch = a.micro_batch;
  o.tp = a.tp;
  o.ep = a.ep;
  o.fp8 = !a.bf16;
  o.json = a.format == "json";
  std::cout << reports::model_show(m, o);
  check_stdout();
  return 0;
}

}  // namespace cs::cli
