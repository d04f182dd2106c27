// MpiRun: how one `ktune tune` process takes part in a run, alone or as one
// rank of an MPI job (`mpirun -n N ktune tune ...`, srun under Slurm).
//
// A launcher is recognised by its environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
// PMIX_RANK) or asked for with `tune --mpi`. Rank 0 runs the strategy, the
// database and the report with evaluator(); every other rank serve()s
// (tuner/mpi/mpi_evaluator.h). Where ktune was built without MPI, a job of
// several ranks, or --mpi, is bad input (exit 2): N copies tuning on their
// own would each measure everything.
#pragma once

#include <functional>
#include <memory>

#include "tuner/spec/spec.h"
#include "tuner/tune/evaluator.h"

namespace ktune::cli {

class MpiRun {
 public:
  // Joins the MPI job where there is one (MPI_Init). Throws Error::bad_input
  // as said above.
  explicit MpiRun(bool requested);
  // MPI_Finalize; a rank that stopped before its part (an exception) leaves
  // without it, so that the launcher ends the job instead of it hanging.
  ~MpiRun();
  MpiRun(const MpiRun&) = delete;
  MpiRun& operator=(const MpiRun&) = delete;

  // Ranks in the job (1 alone).
  int ranks() const;
  // True on ranks > 0: they call serve() and nothing else.
  bool serving() const;
  // This rank's index among the ranks of its host (0 alone): the GPU it adds to --gpu.
  int local_rank() const;
  // The ranks on this rank's host (1 alone): they share its CPUs for compiling.
  int local_ranks() const;
  // Ranks > 0: answers rank 0 until it says stop; returns the exit status.
  int serve(const Spec& spec, const std::function<std::unique_ptr<ConfigEvaluator>()>& make_local);
  // Rank 0: the evaluator of the whole job (`local` itself when alone).
  std::unique_ptr<ConfigEvaluator> evaluator(const Spec& spec, std::unique_ptr<ConfigEvaluator> local);

 private:
  struct Job;
  std::unique_ptr<Job> job_;  // null when alone
};

}  // namespace ktune::cli
