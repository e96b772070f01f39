// The processes of one job, as a study sees them: one process (OneProcess), or MPI ranks (the
// command line's Ranks, host/cli/ranks.h, built with MPI). runStudyRounds (study.h) splits each
// round's worlds over them and brings the outcomes or their summaries to rank 0.
//
// Failure protocol: a rank never waits in a collective operation while another may have failed.
// Each phase of work runs locally inside try/catch, then every rank calls agree() with its error
// (empty when it succeeded); agree() returns every rank's error on every rank, so all ranks stop
// together and rank 0 reports which rank failed and why (describeRankErrors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool root() const { return rank() == 0; }

  // Collective: every rank's error message ("" for success), indexed by rank, on every rank.
  virtual std::vector<std::string> agree(const std::string& myError) const = 0;
  // Collective: the concatenation of every rank's values in rank order, on rank 0 (other ranks
  // get an empty vector).
  virtual std::vector<double> gather(const std::vector<double>& mine) const = 0;
  virtual std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine) const = 0;
  // Collective: rank 0's value on every rank.
  virtual std::int64_t broadcast(std::int64_t value) const = 0;
  // Collective: rank 0's values on every rank (every rank passes a vector of the same size).
  virtual std::vector<double> broadcast(std::vector<double> values) const = 0;
  // Collective: the element-by-element sum over ranks, on every rank (integer counts held in
  // doubles sum exactly, in any order, below 2^53).
  virtual std::vector<double> sum(const std::vector<double>& values) const = 0;
};

// A job of one process: every collective operation returns what it was given.
class OneProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> agree(const std::string& myError) const override { return {myError}; }
  std::vector<double> gather(const std::vector<double>& mine) const override { return mine; }
  std::vector<std::int32_t> gather(const std::vector<std::int32_t>& mine) const override { return mine; }
  std::int64_t broadcast(std::int64_t value) const override { return value; }
  std::vector<double> broadcast(std::vector<double> values) const override { return values; }
  std::vector<double> sum(const std::vector<double>& values) const override { return values; }
};

// The first error of `errors` as one line naming its rank ("rank 1 of 3 failed: REASON"); when
// every rank failed with the same reason, that reason alone. Empty when none failed.
std::string describeRankErrors(const std::vector<std::string>& errors);

}  // namespace lockstep
