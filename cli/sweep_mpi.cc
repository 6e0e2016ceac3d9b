#include "cli/sweep_mpi.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "hw/user_error.h"
#include "reports/sweep_results.h"

#ifdef CLUSTERSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace cs::cli {

namespace {

// The ranks mpirun (Open MPI, or any PMI/PMIx launcher) says this job has; 1 outside mpirun.
int launched_ranks() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::max(1, std::atoi(v));
  return 1;
}

}  // namespace

#ifdef CLUSTERSIM_HAVE_MPI

namespace {

constexpr int kRecordTag = 17;

// This rank's share: every size-th point still to do, from its own rank on.
std::vector<int> share_of(const MpiWorld& w, const std::vector<int>& todo) {
  std::vector<int> mine;
  for (size_t k = static_cast<size_t>(w.rank); k < todo.size(); k += static_cast<size_t>(w.size)) mine.push_back(todo[k]);
  return mine;
}

}  // namespace

MpiWorld mpi_start() {
  MpiWorld w;
  if (launched_ranks() == 1 && !std::getenv("OMPI_COMM_WORLD_RANK")) return w;
  int provided = 0;
  // Only the main thread calls MPI; the points run on other threads.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

int mpi_local_ranks() {
  const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  return v ? std::max(1, std::atoi(v)) : 1;
}

void mpi_stop(const MpiWorld& w) {
  int started = 0;
  MPI_Initialized(&started);
  if (started && w.size >= 1) MPI_Finalize();
}

bool mpi_share_todo(const MpiWorld& w, std::vector<int>& todo, bool ok, const std::string& fingerprint) {
  if (w.size == 1) return ok;
  int n = ok ? static_cast<int>(todo.size()) : -1;
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (n < 0) return false;
  // Every rank must run the same sweep (files and build): rank 0 takes records by index alone.
  std::string root_fp = fingerprint;
  root_fp.resize(64, ' ');
  MPI_Bcast(root_fp.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::string mine = fingerprint;
  mine.resize(64, ' ');
  int same = mine == root_fp ? 1 : 0, all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_same) {
    if (!same)
      std::fprintf(stderr, "clustersim: MPI rank %d has sweep fingerprint %s, rank 0 %s: the ranks read other files "
                   "or run another build\n", w.rank, fingerprint.c_str(), root_fp.c_str());
    return false;
  }
  todo.resize(static_cast<size_t>(n));
  if (n > 0) MPI_Bcast(todo.data(), n, MPI_INT, 0, MPI_COMM_WORLD);
  return true;
}

void mpi_run_points(const MpiWorld& w, const models::SweepSpec& spec, const std::vector<models::SweepPoint>& points,
                    const std::vector<int>& todo, int jobs, const std::function<void(models::SweepRecord)>& done) {
  if (w.size == 1) {
    models::run_sweep_points(spec, points, todo, jobs, done);
    return;
  }
  const std::vector<int> mine = share_of(w, todo);
  std::mutex m;
  std::deque<models::SweepRecord> ready;
  bool finished = false;
  std::thread worker([&] {
    models::run_sweep_points(spec, points, mine, jobs, [&](models::SweepRecord r) {
      const std::lock_guard<std::mutex> lock(m);
      ready.push_back(std::move(r));
    });
    const std::lock_guard<std::mutex> lock(m);
    finished = true;
  });
  auto next_ready = [&](models::SweepRecord& r, bool& all_local) {
    const std::lock_guard<std::mutex> lock(m);
    all_local = finished && ready.empty();
    if (ready.empty()) return false;
    r = std::move(ready.front());
    ready.pop_front();
    return true;
  };
  int remote = w.rank == 0 ? static_cast<int>(todo.size() - mine.size()) : 0;
  try {
    for (bool all_local = false; !all_local || remote > 0;) {
      models::SweepRecord r;
      if (next_ready(r, all_local)) {
        if (w.rank == 0) {
          done(std::move(r));
        } else {
          std::string line = reports::sweep_record_line(r, spec.columns);
          MPI_Send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kRecordTag, MPI_COMM_WORLD);
        }
        continue;
      }
      int flag = 0;
      MPI_Status st;
      if (remote > 0) MPI_Iprobe(MPI_ANY_SOURCE, kRecordTag, MPI_COMM_WORLD, &flag, &st);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      int len = 0;
      MPI_Get_count(&st, MPI_CHAR, &len);
      std::string line(static_cast<size_t>(len), '\0');
      MPI_Recv(line.data(), len, MPI_CHAR, st.MPI_SOURCE, kRecordTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      --remote;
      done(reports::sweep_record_from_line(line, spec.columns));
    }
  } catch (const std::exception& e) {
    // The results cannot be written: stop every rank (and this one's running points) at once.
    std::fprintf(stderr, "clustersim: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  worker.join();
}

#else

MpiWorld mpi_start() {
  if (launched_ranks() > 1)
    throw hw::UserError("clustersim", 0, 0,
                        "started by mpirun with several ranks, but this clustersim was built without MPI: every rank "
                        "would run the whole sweep. Install Open MPI (libopenmpi-dev) and rebuild, or use --shard I/N");
  return {};
}

int mpi_local_ranks() { return 1; }

void mpi_stop(const MpiWorld&) {}

bool mpi_share_todo(const MpiWorld&, std::vector<int>&, bool ok, const std::string&) { return ok; }

void mpi_run_points(const MpiWorld&, const models::SweepSpec& spec, const std::vector<models::SweepPoint>& points,
                    const std::vector<int>& todo, int jobs, const std::function<void(models::SweepRecord)>& done) {
  models::run_sweep_points(spec, points, todo, jobs, done);
}

#endif

}  // namespace cs::cli
