// A sweep spread over the ranks of an MPI job (`mpirun -np N clustersim sweep ...`): every rank
// runs every N-th point still to do, on its own threads; rank 0 gathers the records and alone
// writes the results. Built where Open MPI is found (CLUSTERSIM_HAVE_MPI); without it a process
// started by mpirun with several ranks is refused rather than running the whole sweep N times.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/sweep_run.h"
#include "models/sweep_spec.h"

namespace cs::cli {

struct MpiWorld {
  int rank = 0, size = 1;
};

// MPI started when this process was launched by mpirun (size 1 otherwise, MPI untouched).
// UserError when launched with several ranks by a clustersim built without MPI.
MpiWorld mpi_start();
void mpi_stop(const MpiWorld& w);
// The ranks of this job on this machine (they share its cores).
int mpi_local_ranks();

// Rank 0's `todo` given to every rank; `ok` false on rank 0 stops every rank (returns false), as
// does a rank whose sweep `fingerprint` differs from rank 0's (it says so).
bool mpi_share_todo(const MpiWorld& w, std::vector<int>& todo, bool ok, const std::string& fingerprint);

// This rank's share of `todo` run on `jobs` threads; on rank 0 `done` gets every record, its own
// and the other ranks', one at a time on the calling thread.
void mpi_run_points(const MpiWorld& w, const models::SweepSpec& spec, const std::vector<models::SweepPoint>& points,
                    const std::vector<int>& todo, int jobs, const std::function<void(models::SweepRecord)>& done);

}  // namespace cs::cli
