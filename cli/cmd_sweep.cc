#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/run_document.h"
#include "cli/sweep_mpi.h"
#include "cli/sweep_progress.h"
#include "hw/user_error.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/sm_sweep.h"
#include "models/sweep_answers.h"
#include "models/sweep_point.h"
#include "reports/atomic_file.h"
#include "reports/html_report.h"
#include "reports/sweep_console.h"
#include "reports/sweep_results.h"

namespace cs::cli {

namespace {

using models::SweepRecord;

struct Shard {
  int index = 0, count = 1;
};

Shard parse_shard(const std::string& text) {
  Shard s;
  const size_t slash = text.find('/');
  auto number = [](std::string_view v, int& out) {
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    return !v.empty() && r.ec == std::errc() && r.ptr == v.data() + v.size();
  };
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), s.index) ||
      !number(std::string_view(text).substr(slash + 1), s.count) || s.count < 1 || s.index < 0 || s.index >= s.count)
    throw hw::UserError("--shard", 0, 0, "'" + text + "' is not I/N with 0 <= I < N (e.g. 0/4 ... 3/4)");
  return s;
}

reports::SweepFormat format_of(const SweepArgs& args) {
  if (args.format == "csv") return reports::SweepFormat::kCsv;
  if (args.format == "json") return reports::SweepFormat::kJson;
  const std::string ext = std::filesystem::path(args.out).extension().string();
  if (ext == ".csv") return reports::SweepFormat::kCsv;
  if (ext == ".json") return reports::SweepFormat::kJson;
  throw hw::UserError(args.out, 0, 0, "name the results file .csv or .json, or give --format csv|json");
}

void apply_args(const SweepArgs& args, models::SweepSpec& spec) {
  const bool has_sweep = !spec.axes.empty() || !spec.points.empty();
  std::string comm = args.comm_sms;
  if (comm.empty() && !has_sweep) {
    comm = "0:48:4";  // a plain scenario: the SM split, as DeepSeek's question is
    std::cerr << "clustersim: " << args.file << " has no sweep section; sweeping its communication SMs over " << comm
              << "\n";
  }
  if (!comm.empty()) models::add_comm_sms_axis(spec, models::parse_int_range(comm, "--comm-sms"));
  if (!args.comm_partition.empty()) spec.comm_partition = args.comm_partition;
  if (!args.compute_partition.empty()) spec.compute_partition = args.compute_partition;
  if (args.no_training) spec.training = false;
}

void set_objective(const SweepArgs& args, const models::Scenario& base, models::SweepSpec& spec) {
  const bool training = spec.training && base.training;
  if (!args.objective.empty()) {
    for (auto o : {models::SweepObjective::kStepTime, models::SweepObjective::kGpuHours, models::SweepObjective::kDays,
                   models::SweepObjective::kCost, models::SweepObjective::kTokensPerGpu})
      if (args.objective == models::objective_name(o)) spec.objective = o;
    spec.objective_set = true;
  } else if (!spec.objective_set) {
    spec.objective = training ? models::SweepObjective::kGpuHours : models::SweepObjective::kStepTime;
  }
  const bool needs = models::objective_needs_training(spec.objective) || spec.objective == models::SweepObjective::kTokensPerGpu;
  if (needs && !training)
    throw hw::UserError(args.file, 0, 0, std::string("the objective ") + models::objective_name(spec.objective) +
                                             " needs a training run, and " +
                                             (base.training ? "--no-training leaves it out" : "the scenario has none"));
}

std::string list_points(const models::SweepSpec& spec, const std::vector<models::SweepPoint>& points) {
  std::string out;
  for (const auto& p : points) {
    out += std::to_string(p.index) + " ";
    std::string set;
    for (const auto& [k, v] : p.set) set += (set.empty() ? "" : ", ") + k + "=" + v.text();
    out += set.empty() ? "(the base scenario)" : set;
    out += p.skip.empty() ? "\n" : "  [skipped: " + p.skip + "]\n";
  }
  return out + std::to_string(points.size()) + " points of sweep '" + spec.name + "'\n";
}

// Results already on file for this sweep: the output's own (a rerun) and those of --merge files.
std::map<int, SweepRecord> results_on_file(const SweepArgs& args, const reports::SweepHeader& header,
                                           std::optional<reports::SweepFormat> out_format, const models::SweepSpec& spec,
                                           const std::vector<models::SweepPoint>& points) {
  std::map<int, SweepRecord> have;
  auto take = [&](const std::string& path, reports::SweepFormat f) {
    for (SweepRecord& r : reports::read_sweep_results(path, f, header)) {
      // The values as this sweep writes them (a JSON file gives 0.50 back as 0.5).
      r.values = models::sweep_values(spec, points[static_cast<size_t>(r.index)]);
      have.emplace(r.index, std::move(r));
    }
  };
  if (out_format) take(args.out, *out_format);
  for (const std::string& m : args.merge) {
    if (!std::filesystem::exists(m)) throw hw::UserError(m, 0, 0, "cannot read the results file to merge");
    SweepArgs as_out = args;
    as_out.out = m;
    as_out.format.clear();
    take(m, format_of(as_out));
  }
  return have;
}

}  // namespace

int cmd_sweep(const SweepArgs& args) {
  const MpiWorld world = mpi_start();
  const bool root = world.rank == 0;
  models::SweepSpec spec = models::load_sweep_file(args.file);
  spec.limits = graph_limits(args.graph_limit);
  apply_args(args, spec);
  // The base scenario must load: its errors come with their places before anything runs.
  const models::Scenario base = models::load_scenario_text(spec.base_text, spec.base_file, spec.limits);
  set_objective(args, base, spec);
  const std::vector<models::SweepPoint> points = models::expand_sweep(spec);
  if (args.list) {
    if (root) std::cout << list_points(spec, points);
    mpi_stop(world);
    return 0;
  }
  const Shard shard = args.shard.empty() ? Shard{} : parse_shard(args.shard);
  if (world.size > 1 && shard.count > 1) throw hw::UserError("--shard", 0, 0, "under mpirun the ranks share the points; leave --shard out");

  reports::SweepHeader header;
  header.name = spec.name;
  header.file = spec.file;
  header.base = spec.base_file;
  header.version = version();
  header.fingerprint = models::sweep_fingerprint(spec, points, header.version);
  header.points = static_cast<int>(points.size());
  header.shard = args.shard;
  header.columns = spec.columns;

  if (!args.out.empty() && std::filesystem::is_directory(args.out))
    throw hw::UserError(args.out, 0, 0, "is a directory; name the results file (.csv or .json)");
  // Only a regular file (or a new one) is a journal that a rerun resumes; a stream gets the end result.
  const bool to_file = !args.out.empty() && (!std::filesystem::exists(args.out) || std::filesystem::is_regular_file(args.out));
  if (!args.out.empty() && !args.report.empty() && same_file(args.out, args.report))
    throw hw::UserError(args.report, 0, 0, "--report names the same file as --out");
  std::optional<reports::SweepFormat> out_format;
  if (!args.out.empty()) out_format = format_of(args);

  std::map<int, SweepRecord> have;
  std::vector<int> todo;
  std::optional<reports::SweepJournal> journal;
  std::optional<reports::AtomicFile> report;
  int mine = 0;
  if (root) {
    try {
      have = results_on_file(args, header, to_file ? out_format : std::nullopt, spec, points);
      for (const auto& p : points) {
        if (p.index % shard.count != shard.index) continue;
        ++mine;
        if (have.count(p.index)) continue;
        if (!p.skip.empty()) have.emplace(p.index, models::skipped_record(spec, p));
        else todo.push_back(p.index);
      }
      if (!args.report.empty()) report.emplace(args.report);  // fails now if it cannot be written
      if (to_file) {
        std::vector<SweepRecord> kept;
        for (const auto& [i, r] : have) kept.push_back(r);
        journal.emplace(args.out, *out_format, header, kept);
      }
    } catch (...) {
      mpi_share_todo(world, todo, false, header.fingerprint);
      mpi_stop(world);
      throw;
    }
  }
  if (!mpi_share_todo(world, todo, true, header.fingerprint)) {
    mpi_stop(world);  // rank 0, or the rank that differs, says why
    return 2;
  }

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int jobs = args.jobs > 0 ? args.jobs : std::max(1, cores / (world.size > 1 ? mpi_local_ranks() : 1));
  std::optional<SweepProgress> progress;
  if (root) {
    std::cerr << "clustersim: sweep '" << spec.name << "': " << points.size() << " points";
    if (shard.count > 1) std::cerr << ", shard " << args.shard << " holds " << mine;
    std::cerr << "; " << todo.size() << " to run (" << jobs << " at once" << (world.size > 1 ? " on each of " + std::to_string(world.size) + " MPI ranks" : "") << ")";
    if (static_cast<int>(todo.size()) < mine) std::cerr << ", the rest on file";
    std::cerr << "\n";
    progress.emplace(static_cast<int>(todo.size()), mine - static_cast<int>(todo.size()), mine, isatty(2) != 0);
  }
  mpi_run_points(world, spec, points, todo, jobs, [&](SweepRecord r) {
    if (journal) journal->append(r);
    have.insert_or_assign(r.index, std::move(r));
    progress->point_done();
  });
  if (!root) {
    mpi_stop(world);
    return 0;
  }
  progress->finish();

  std::vector<SweepRecord> records;
  for (auto& [i, r] : have) records.push_back(std::move(r));
  const models::SweepAnswers answers = models::sweep_answers(spec, records);
  if (!args.out.empty()) {
    reports::AtomicFile out(args.out);
    out.stream() << reports::sweep_results_text(*out_format, header, spec, records, answers);
    out.finish_writing();
    out.commit();
    for (const auto& line : reports::sweep_answer_lines(spec, records, answers)) std::cout << line << "\n";
  } else if (args.format == "csv" || args.format == "json") {
    std::cout << reports::sweep_results_text(format_of(args), header, spec, records, answers);
  } else {
    std::cout << reports::sweep_console(spec, records, answers);
  }
  if (report && answers.best) {
    std::cerr << "clustersim: running the best point again for the report\n";
    const models::Scenario sc = models::sweep_point_scenario(spec, points[static_cast<size_t>(records[static_cast<size_t>(*answers.best)].index)]);
    RunDocument d = run_document(sc, models::build_op_workload(sc), spec.base_file, args.argv, true);
    d.document["report"]["sweep"] = reports::sweep_chart(spec, records, answers);
    report->stream() << reports::render_html(d.document);
    report->finish_writing();
  } else if (report) {
    throw hw::UserError(args.report, 0, 0, "no point ran, so there is no report to write");
  }
  check_stdout();
  if (report) report->commit();
  if (!args.out.empty()) std::cerr << "clustersim: wrote " << args.out << "\n";
  if (report) std::cerr << "clustersim: wrote report " << args.report << " (open it in a browser)\n";
  mpi_stop(world);
  if (answers.ok == 0 && answers.failed > 0) {
    for (const SweepRecord& r : records)
      if (r.status == "failed") {
        std::cerr << "clustersim: every point failed; the first: " << r.message << "\n";
        break;
      }
    return 2;
  }
  return 0;
}

}  // namespace cs::cli
