#include <attnlab/core/distributed.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#ifdef ATTNLAB_WITH_MPI
#include <mpi.h>
#endif

namespace attnlab::distributed {
namespace {

bool joined = false;    // MPI_Init was called here
bool detached = false;  // a forked child: local from now on
int this_rank = 0, job_size = 1, this_node_rank = 0, node_ranks = 1;

[[maybe_unused]] bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(variable)) return true;
  return false;
}

bool in_job() { return joined && !detached && job_size > 1; }

}  // namespace

void init(int& argc, char**& argv) {
#ifdef ATTNLAB_WITH_MPI
  if (joined || !launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);  // MPI calls only outside OpenMP regions
  joined = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &this_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job_size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, this_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &this_node_rank);
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  std::atexit(finalize);
#else
  (void)argc, (void)argv;
#endif
}

void finalize() {
#ifdef ATTNLAB_WITH_MPI
  int finalized = 0;
  if (joined && !detached && (MPI_Finalized(&finalized), !finalized)) MPI_Finalize();
#endif
}

int rank() { return detached ? 0 : this_rank; }
int size() { return detached ? 1 : job_size; }
int node_rank() { return detached ? 0 : this_node_rank; }
int node_size() { return detached ? 1 : node_ranks; }

Stop first_stop(int exit_code) {
  if (!in_job()) return exit_code < 0 ? Stop{} : Stop{0, exit_code};
#ifdef ATTNLAB_WITH_MPI
  // MINLOC's pair: the smallest rank that stops, with its exit code carried as the pair's index.
  struct {
    int rank, exit_code;
  } mine{exit_code < 0 ? std::numeric_limits<int>::max() : this_rank, exit_code}, first{};
  MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  if (first.rank == std::numeric_limits<int>::max()) return {};
  return {first.rank, first.exit_code};
#else
  return {};
#endif
}

void broadcast_from_root([[maybe_unused]] std::string& bytes) {
#ifdef ATTNLAB_WITH_MPI
  if (!in_job()) return;
  auto size = static_cast<unsigned long long>(bytes.size());
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (size > static_cast<unsigned long long>(std::numeric_limits<int>::max()))
    throw std::length_error("distributed: more bytes than one MPI message carries");
  bytes.resize(size);
  MPI_Bcast(bytes.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD);
#endif
}

Block block_of(std::uint64_t total, int r, int n) {
  const auto share = [&](std::uint64_t k) { return total / n * k + std::min<std::uint64_t>(k, total % n); };
  return {share(std::uint64_t(r)), share(std::uint64_t(r) + 1)};
}

std::vector<double> all_blocks(std::span<const double> mine, [[maybe_unused]] std::uint64_t total,
                               [[maybe_unused]] std::size_t width) {
  if (!in_job()) return {mine.begin(), mine.end()};
#ifdef ATTNLAB_WITH_MPI
  std::vector<int> counts(job_size), offsets(job_size);
  for (int r = 0; r < job_size; ++r) {
    const auto b = block_of(total, r, job_size);
    counts[r] = int((b.last - b.first) * width);
    offsets[r] = int(b.first * width);
  }
  if (total * width > std::uint64_t(std::numeric_limits<int>::max()))
    throw std::length_error("distributed: more trial values than one MPI message carries");
  std::vector<double> all(total * width);
  MPI_Allgatherv(mine.data(), int(mine.size()), MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                 MPI_COMM_WORLD);
  return all;
#else
  return {};
#endif
}

void barrier() {
#ifdef ATTNLAB_WITH_MPI
  if (in_job()) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void abort(int code, const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
#ifdef ATTNLAB_WITH_MPI
  if (in_job()) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

#ifdef ATTNLAB_WITH_MPI
struct WorkQueue::Shared {
  MPI_Win window = MPI_WIN_NULL;
  std::uint64_t* counter = nullptr;
};
#else
struct WorkQueue::Shared {};
#endif

WorkQueue::WorkQueue(std::uint64_t count) : count_(count) {
#ifdef ATTNLAB_WITH_MPI
  if (!in_job()) return;
  shared_ = new Shared;
  MPI_Win_allocate(root() ? MPI_Aint(sizeof(std::uint64_t)) : 0, sizeof(std::uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &shared_->counter, &shared_->window);
  if (root()) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, shared_->window);
    *shared_->counter = 0;
    MPI_Win_unlock(0, shared_->window);
  }
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

WorkQueue::~WorkQueue() {
#ifdef ATTNLAB_WITH_MPI
  if (shared_) MPI_Win_free(&shared_->window);
#endif
  delete shared_;
}

std::uint64_t WorkQueue::next() {
#ifdef ATTNLAB_WITH_MPI
  if (shared_) {
    const std::uint64_t one = 1;
    std::uint64_t taken = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, shared_->window);
    MPI_Fetch_and_op(&one, &taken, MPI_UINT64_T, 0, 0, MPI_SUM, shared_->window);
    MPI_Win_unlock(0, shared_->window);
    return std::min(taken, count_);
  }
#endif
  return local_ < count_ ? local_++ : count_;
}

void detach_from_job() { detached = true; }

}  // namespace attnlab::distributed
