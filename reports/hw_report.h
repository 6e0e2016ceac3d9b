// The hardware catalog as text: `clustersim hw list` and `clustersim hw show NAME`.
#pragma once

#include <string>

namespace cs::reports {

// Every GPU, NIC, switch, node type and preset, one table each.
std::string hw_list();
// One catalog entry with its figures and their sources; for a preset, the built fabric's figures
// (GPUs, switches per layer, cables, links, bisection bandwidth). Throws hw::UserError when unknown.
std::string hw_show(const std::string& name);

}  // namespace cs::reports
