#include "ranks.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

#ifdef LOCKSTEP_HAVE_MPI
// The C interface only (Open MPI and MPICH would otherwise pull in their deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace lockstep::cli {

namespace {

// A launcher (mpirun, mpiexec, srun with PMI/PMIx) started this process.
bool startedByLauncher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

#ifdef LOCKSTEP_HAVE_MPI
void finalizeMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string("MPI: ") + what + ": " + std::string(text, length));
}

// Messages of at most this many elements (MPI counts are int).
constexpr std::int64_t kPiece = std::int64_t(1) << 28;

template <class T>
std::vector<T> gatherTo0(const std::vector<T>& mine, MPI_Datatype type, int rank, int size) {
  const std::int64_t n = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> counts(size);
  check(MPI_Gather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "gather counts");
  if (rank != 0) {
    for (std::int64_t at = 0; at < n; at += kPiece)
      check(MPI_Send(mine.data() + at, static_cast<int>(std::min(kPiece, n - at)), type, 0, 7, MPI_COMM_WORLD),
            "send values");
    return {};
  }
  std::vector<T> all(static_cast<std::size_t>(std::accumulate(counts.begin(), counts.end(), std::int64_t(0))));
  std::copy(mine.begin(), mine.end(), all.begin());
  std::int64_t offset = n;
  for (int r = 1; r < size; ++r) {
    for (std::int64_t at = 0; at < counts[r]; at += kPiece)
      check(MPI_Recv(all.data() + offset + at, static_cast<int>(std::min(kPiece, counts[r] - at)), type, r, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "receive values");
    offset += counts[r];
  }
  return all;
}
#endif

}  // namespace

Ranks& Ranks::world() {
  static Ranks ranks;
  return ranks;
}

Ranks::Ranks() {
#ifdef LOCKSTEP_HAVE_MPI
  if (!startedByLauncher()) return;
  int provided = 0;
  // The CPU backend's OpenMP threads make no MPI calls: funneled is enough.
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init");
  std::atexit(finalizeMpi);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "split by node");
  MPI_Comm_rank(node, &localRank_);
  MPI_Comm_size(node, &localSize_);
  MPI_Comm_free(&node);
#else
  (void)startedByLauncher;
#endif
}

std::vector<std::string> Ranks::agree(const std::string& myError) const {
  if (!mpi_) return {myError};
#ifdef LOCKSTEP_HAVE_MPI
  const int length = static_cast<int>(myError.size());
  std::vector<int> lengths(size_);
  check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "exchange errors");
  std::vector<int> offsets(size_, 0);
  for (int r = 1; r < size_; ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  check(MPI_Allgatherv(myError.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                       MPI_COMM_WORLD),
        "exchange errors");
  std::vector<std::string> errors(size_);
  for (int r = 0; r < size_; ++r) errors[r] = all.substr(offsets[r], lengths[r]);
  return errors;
#else
  return {myError};
#endif
}

std::vector<double> Ranks::gather(const std::vector<double>& mine) const {
#ifdef LOCKSTEP_HAVE_MPI
  if (mpi_) return gatherTo0(mine, MPI_DOUBLE, rank_, size_);
#endif
  return mine;
}

std::vector<std::int32_t> Ranks::gather(const std::vector<std::int32_t>& mine) const {
#ifdef LOCKSTEP_HAVE_MPI
  if (mpi_) return gatherTo0(mine, MPI_INT32_T, rank_, size_);
#endif
  return mine;
}

std::int64_t Ranks::broadcast(std::int64_t value) const {
#ifdef LOCKSTEP_HAVE_MPI
  if (mpi_) check(MPI_Bcast(&value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "broadcast");
#endif
  return value;
}

double Ranks::sum(double value) const {
#ifdef LOCKSTEP_HAVE_MPI
  double total = value;
  if (mpi_) check(MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "sum");
  return total;
#else
  return value;
#endif
}

std::vector<double> Ranks::sum(const std::vector<double>& values) const {
  std::vector<double> total = values;
#ifdef LOCKSTEP_HAVE_MPI
  if (mpi_)
    check(MPI_Allreduce(values.data(), total.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                        MPI_COMM_WORLD),
          "sum");
#endif
  return total;
}

std::vector<double> Ranks::broadcast(std::vector<double> values) const {
#ifdef LOCKSTEP_HAVE_MPI
  if (mpi_) check(MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD), "broadcast");
#endif
  return values;
}

}  // namespace lockstep::cli
