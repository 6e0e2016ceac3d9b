#include "models/stage_units.h"

#include "models/parallel_layout.h"

namespace cs::models {

namespace {

UnitOps split_unit(std::string prefix, const std::vector<LayerOp>& ops) {
  UnitOps u;
  u.prefix = std::move(prefix);
  for (const LayerOp& o : ops) (o.pass == Pass::kForward ? u.fwd : u.bwd).push_back(o);
  return u;
}

// Built by append: g++ 12 warns falsely (-Wrestrict) on "L" + std::to_string(l).
std::string prefix(const char* head, int i) {
  std::string p(head);
  p.append(std::to_string(i)).push_back('.');
  return p;
}

}  // namespace

std::vector<UnitOps> stage_units(const ModelSpec& m, const std::vector<int>& split, int stage, const LayerContext& c) {
  const int first = first_layer_of_stage(split, stage);
  std::vector<UnitOps> units;
  if (stage == 0) units.push_back(split_unit("", embedding_ops(m, c)));
  for (int l = first; l < first + split[stage]; ++l) units.push_back(split_unit(prefix("L", l), layer_ops(m, l, c)));
  if (stage == static_cast<int>(split.size()) - 1) {
    units.push_back(split_unit("", head_ops(m, c)));
    for (int d = 0; d < m.mtp_depth; ++d) units.push_back(split_unit(d == 0 ? "" : prefix("mtp", d), mtp_ops(m, c)));
  }
  return units;
}

}  // namespace cs::models
