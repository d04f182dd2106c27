#include "tuner/cli/mpi_run.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ktune/error.h"
#if KTUNE_WITH_MPI
#include "tuner/mpi/mpi_evaluator.h"
#endif

namespace ktune::cli {

namespace {

// How many ranks a launcher started, from its environment: 0 when none
// started this process, -1 when one did without saying how many (PMIx).
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  return std::getenv("PMIX_RANK") ? -1 : 0;
}

}  // namespace

#if KTUNE_WITH_MPI

struct MpiRun::Job {
  mpi::World world;
  bool handed_over = false;  // rank 0: an MpiEvaluator took charge of the other ranks
  bool served = false;       // ranks > 0: served until told to shut down
};

MpiRun::MpiRun(bool requested) {
  const int ranks = launched_ranks();
  if (!requested && (ranks == 0 || ranks == 1)) return;
  job_ = std::make_unique<Job>();
}

MpiRun::~MpiRun() {
  if (!job_) return;
  // A rank that stopped before its part (bad input, a database it cannot
  // open) leaves without MPI_Finalize, which would wait for ranks that wait
  // for it: the launcher then ends the job with this rank's status.
  if (!(job_->world.rank() == 0 ? job_->handed_over : job_->served)) job_->world.abandon();
}

bool MpiRun::serving() const { return job_ && job_->world.rank() > 0; }
int MpiRun::ranks() const { return job_ ? job_->world.size() : 1; }
int MpiRun::local_rank() const { return job_ ? job_->world.local_rank() : 0; }
int MpiRun::local_ranks() const { return job_ ? job_->world.local_size() : 1; }

int MpiRun::serve(const Spec& spec, const std::function<std::unique_ptr<ConfigEvaluator>()>& make_local) {
  mpi::serve(job_->world, spec, make_local);
  job_->served = true;
  return 0;
}

std::unique_ptr<ConfigEvaluator> MpiRun::evaluator(const Spec& spec, std::unique_ptr<ConfigEvaluator> local) {
  if (!job_ || job_->world.size() == 1) return local;
  job_->handed_over = true;  // from here the MpiEvaluator shuts the ranks down, even when it throws
  return std::make_unique<mpi::MpiEvaluator>(job_->world, spec, std::move(local));
}

#else

struct MpiRun::Job {};

MpiRun::MpiRun(bool requested) {
  const int ranks = launched_ranks();
  if (requested || ranks > 1 || ranks < 0)
    throw Error::bad_input(std::string(requested ? "--mpi: " : "started as one rank of an MPI job: ") +
                           "this ktune was built without MPI (install libopenmpi-dev, as scripts/setup.sh does, "
                           "and build again with -DKTUNE_MPI=ON, the default); run it as one process");
}

MpiRun::~MpiRun() = default;
bool MpiRun::serving() const { return false; }
int MpiRun::ranks() const { return 1; }
int MpiRun::local_rank() const { return 0; }
int MpiRun::local_ranks() const { return 1; }
int MpiRun::serve(const Spec&, const std::function<std::unique_ptr<ConfigEvaluator>()>&) { return 0; }
std::unique_ptr<ConfigEvaluator> MpiRun::evaluator(const Spec&, std::unique_ptr<ConfigEvaluator> local) {
  return local;
}

#endif

}  // namespace ktune::cli
