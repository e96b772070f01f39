// The processes of one `lockstep` job: MPI ranks when the program was started by mpirun or srun
// and built with MPI (LOCKSTEP_HAVE_MPI), else a single process. The study and bench commands
// split their worlds over the ranks; everything else runs on each process as it would alone.
//
// Failure protocol: a rank never waits in a collective operation while another may have failed.
// Each phase of work runs locally inside try/catch, then every rank calls agree() with its error
// (empty when it succeeded); agree() returns every rank's error on every rank, so all ranks stop
// together and rank 0 reports which rank failed and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::cli {

class Ranks {
 public:
  // The job's ranks: initializes MPI on first use when a launcher started this process (it sets
  // OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), finalizes it at exit. Without MPI, or without a
  // launcher, one rank.
  static Ranks& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  // Rank among the ranks on this node and how many there are (GPU choice, CPU cores per rank).
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
  bool usesMpi() const { return mpi_; }

  // Collective: every rank's error message ("" for success), indexed by rank, on every rank.
  std::vector<std::string> agree(const std::string& myError) const;
  // Collective: the concatenation of every rank's values in rank order, on rank 0 (other ranks
  // get an empty vector).
  std::vector<double> gather(const std::vector<double>& mine) const;
  std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine) const;
  // Collective: rank 0's value on every rank.
  std::int64_t broadcast(std::int64_t value) const;
  // Collective: the sum over ranks, on every rank (element by element for a vector: integer
  // counts held in doubles sum exactly, in any order, below 2^53).
  double sum(double value) const;
  std::vector<double> sum(const std::vector<double>& values) const;
  // Collective: rank 0's values on every rank (every rank passes a vector of the same size).
  std::vector<double> broadcast(std::vector<double> values) const;

 private:
  Ranks();
  int rank_ = 0, size_ = 1, localRank_ = 0, localSize_ = 1;
  bool mpi_ = false;
};

// The first error of `errors` as one line naming its rank ("rank 1 of 3 failed: REASON"); when
// every rank failed with the same reason, that reason alone. Empty when none failed.
std::string describeRankErrors(const std::vector<std::string>& errors);

}  // namespace lockstep::cli
