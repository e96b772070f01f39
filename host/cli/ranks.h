// The processes of one `lockstep` job: MPI ranks when the program was started by mpirun or srun
// and built with MPI (LOCKSTEP_HAVE_MPI), else a single process. The study and bench commands
// split their worlds over the ranks; everything else runs on each process as it would alone.
// The collective operations and the failure protocol are the Communicator's (communicator.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/study/communicator.h"

namespace lockstep::cli {

class Ranks final : public Communicator {
 public:
  // The job's ranks: initializes MPI on first use when a launcher started this process (it sets
  // OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), finalizes it at exit. Without MPI, or without a
  // launcher, one rank.
  static Ranks& world();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Rank among the ranks on this node and how many there are (GPU choice, CPU cores per rank).
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
  bool usesMpi() const { return mpi_; }

  std::vector<std::string> agree(const std::string& myError) const override;
  std::vector<double> gather(const std::vector<double>& mine) const override;
  std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine) const override;
  std::int64_t broadcast(std::int64_t value) const override;
  std::vector<double> broadcast(std::vector<double> values) const override;
  std::vector<double> sum(const std::vector<double>& values) const override;
  // Collective: the sum over ranks of one value, on every rank.
  double sum(double value) const;

 private:
  Ranks();
  int rank_ = 0, size_ = 1, localRank_ = 0, localSize_ = 1;
  bool mpi_ = false;
};

}  // namespace lockstep::cli
