#pragma once
// The processes of an MPI job. A binary started by mpirun or srun joins the job; one started any other way (or built
// without MPI) is a job of one process, and every call below is then a local no-op. Every rank runs the same code
// on the same inputs; only the Monte-Carlo trials and the sweep points are divided, so every rank holds the same
// results and rank 0 alone writes them.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnlab::distributed {

// Joins the job when the launcher's environment says there is one (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK).
void init(int& argc, char**& argv);
// Leaves the job (at exit; idempotent).
void finalize();

int rank();
int size();
inline bool root() { return rank() == 0; }
// This rank's place among the ranks on its node (MPI_COMM_TYPE_SHARED), and their count: they share the node's memory
// and GPUs, which are chosen by node_rank (global rank mod devices is right only when ranks fill nodes in blocks).
// 0 and 1 without a job.
int node_rank();
int node_size();

// Where some ranks must stop before the run (bad input, or a node without its GPU), every rank learns the lowest such
// rank and its exit code, so that all stop before a collective call the stopping ranks would leave the others waiting
// in. `exit_code` < 0: this rank would go on. Every rank must call it (one MPI_Allreduce); without a job, this rank's.
struct Stop {
  int rank = -1, exit_code = -1;  // rank -1: no rank stops
};
Stop first_stop(int exit_code);

// `bytes` as rank 0 holds them, on every rank (every rank must call it).
void broadcast_from_root(std::string& bytes);

// The trials [first, last) of `total` that this rank runs: contiguous blocks, the first ranks one larger.
struct Block {
  std::uint64_t first = 0, last = 0;
};
Block block_of(std::uint64_t total, int rank, int size);

// Every rank's `block_of(total)` values of `width` doubles each, concatenated in rank order on every rank: `mine`
// holds this rank's block, the result all `total * width` values.
std::vector<double> all_blocks(std::span<const double> mine, std::uint64_t total, std::size_t width);

void barrier();

// Ends every rank of the job after `message` (one line on stderr), as a crashed rank would: the only way out when the
// others may be waiting in a collective call.
[[noreturn]] void abort(int code, const std::string& message);

// Indices 0, 1, ... handed out once each across the job, to whichever rank asks first (a counter on rank 0, read
// and incremented atomically); in a job of one process, in order.
class WorkQueue {
 public:
  explicit WorkQueue(std::uint64_t count);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  // The next index, or `count` once all are taken.
  std::uint64_t next();

 private:
  std::uint64_t count_, local_ = 0;
  struct Shared;
  Shared* shared_ = nullptr;
};

// In a process forked from a rank (which must not touch the job's communicator): every call above is local.
void detach_from_job();

}  // namespace attnlab::distributed
