#include "models/sm_sweep.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "hw/user_error.h"
#include "models/model_workload.h"

namespace cs::models {

namespace {

int partition_named(const Scenario& sc, const std::string& name, const char* flag) {
  const auto& parts = sc.cluster.partitions;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].name == name) return static_cast<int>(i);
  std::string names;
  for (const auto& p : parts) names += (names.empty() ? "" : ", ") + p.name;
  throw hw::UserError(sc.file, 0, 0, "the cluster has no SM partition '" + name + "' (it has " + names +
                                         "); name one with " + flag);
}

// The model workload with its communication streams moved from partition `from` to `to`. Only
// where `to` is not its own compute partition: there an emptied communication partition already
// lends its kernels the compute SMs (ModelWorkload::comm_kernel_partition).
std::shared_ptr<const ModelWorkload> move_comm(const std::shared_ptr<const ModelWorkload>& mw, int from, int to) {
  if (!mw || mw->comm_partition != from || mw->compute_partition == to) return mw;
  auto copy = std::make_shared<ModelWorkload>(*mw);
  copy->comm_partition = to;
  return copy;
}

}  // namespace

Scenario with_comm_sms(const Scenario& sc, int comm_index, int compute_index, int comm_sms) {
  auto& parts = sc.cluster.partitions;
  const int total = parts.at(comm_index).sms + parts.at(compute_index).sms;
  if (comm_sms < 0 || comm_sms >= total)
    throw hw::UserError(sc.file, 0, 0, "cannot give partition '" + parts[comm_index].name + "' " +
                                           std::to_string(comm_sms) + " SMs: it and '" + parts[compute_index].name +
                                           "' hold " + std::to_string(total) + ", and the compute partition needs at least one");
  Scenario out = sc;
  out.cluster.partitions[comm_index].sms = comm_sms;
  out.cluster.partitions[compute_index].sms = total - comm_sms;
  if (comm_sms > 0) return out;
  out.model = move_comm(out.model, comm_index, compute_index);
  if (out.training)
    for (TrainingPhase& ph : out.training->phases) ph.workload = move_comm(ph.workload, comm_index, compute_index);
  for (StreamSpec& s : out.streams) {
    if (s.partition_index != comm_index) continue;
    s.partition_index = compute_index;
    s.partition = parts[compute_index].name;
  }
  return out;
}

std::pair<int, int> sm_split_partitions(const Scenario& sc, const std::string& comm_name,
                                        const std::string& compute_name) {
  int comm = -1, compute = -1;
  if (sc.model) {
    comm = sc.model->comm_partition;
    compute = sc.model->compute_partition;
  }
  if (!comm_name.empty() || comm < 0) comm = partition_named(sc, comm_name.empty() ? "comm" : comm_name, "--comm-partition");
  if (!compute_name.empty() || compute < 0)
    compute = partition_named(sc, compute_name.empty() ? "compute" : compute_name, "--compute-partition");
  if (comm == compute) throw hw::UserError(sc.file, 0, 0, "the communication and compute partitions must differ");
  return {comm, compute};
}

std::vector<int> parse_int_range(const std::string& text, const std::string& what) {
  auto fail = [&](const std::string& why) -> std::vector<int> {
    throw hw::UserError(what, 0, 0, "'" + text + "' " + why + " (write FROM:TO:STEP, e.g. 0:48:4, or a list, e.g. 0,8,20)");
  };
  auto number = [&](std::string_view s, int& v) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
  };
  std::vector<int> out;
  const std::string_view t = text;
  if (t.find(':') != std::string_view::npos) {
    const size_t a = t.find(':'), b = t.find(':', a + 1);
    int from = 0, to = 0, step = 0;
    if (b == std::string_view::npos || t.find(':', b + 1) != std::string_view::npos ||
        !number(t.substr(0, a), from) || !number(t.substr(a + 1, b - a - 1), to) || !number(t.substr(b + 1), step))
      return fail("is not a range");
    if (step <= 0 || from < 0 || to < from) return fail("needs 0 <= FROM <= TO and STEP >= 1");
    if ((to - from) / step >= 1000) return fail("has more than 1000 points");
    for (int i = 0; i <= (to - from) / step; ++i) out.push_back(from + i * step);  // no overflow past `to`
    return out;
  }
  size_t start = 0;
  while (start <= t.size()) {
    const size_t end = std::min(t.find(',', start), t.size());
    int v = 0;
    if (!number(t.substr(start, end - start), v) || v < 0) return fail("is not a list of whole numbers >= 0");
    if (std::find(out.begin(), out.end(), v) != out.end()) return fail("names " + std::to_string(v) + " twice");
    out.push_back(v);
    if (out.size() > 1000) return fail("has more than 1000 points");
    start = end + 1;
  }
  return out;
}

}  // namespace cs::models
