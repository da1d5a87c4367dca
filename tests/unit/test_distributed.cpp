// The job-level pieces that hold without mpirun: the trial blocks tile the trials in rank order, and a job of one
// process hands out the work queue in order, gathers its own block, stops on its own exit code and is alone on its node
// (tests/mpi/test_rank_agreement.sh runs the rest under mpirun).
#include <attnlab/core/distributed.hpp>

#include <gtest/gtest.h>

using namespace attnlab;

TEST(Distributed, BlocksTileTheTrialsInRankOrderWithSizesWithinOne) {
  for (std::uint64_t total : {0, 1, 2, 7, 64, 1001})
    for (int size = 1; size <= 7; ++size) {
      std::uint64_t next = 0, smallest = total, largest = 0;
      for (int rank = 0; rank < size; ++rank) {
        const auto b = distributed::block_of(total, rank, size);
        EXPECT_EQ(b.first, next) << total << " trials, rank " << rank << " of " << size;
        EXPECT_LE(b.first, b.last);
        smallest = std::min(smallest, b.last - b.first), largest = std::max(largest, b.last - b.first);
        next = b.last;
      }
      EXPECT_EQ(next, total) << size << " ranks";
      EXPECT_LE(largest - smallest, 1u) << total << " trials on " << size << " ranks";
    }
}

TEST(Distributed, AJobOfOneProcessTakesTheQueueInOrderAndGathersItsOwnBlock) {
  ASSERT_EQ(distributed::size(), 1);
  distributed::WorkQueue queue(3);
  EXPECT_EQ(queue.next(), 0u);
  EXPECT_EQ(queue.next(), 1u);
  EXPECT_EQ(queue.next(), 2u);
  EXPECT_EQ(queue.next(), 3u);
  EXPECT_EQ(queue.next(), 3u) << "exhausted stays exhausted";
  const std::vector<double> mine{1, 2, 3, 4};
  EXPECT_EQ(distributed::all_blocks(mine, 2, 2), mine);
}

TEST(Distributed, AJobOfOneProcessStopsOnItsOwnCodeAndIsAloneOnItsNode) {
  ASSERT_EQ(distributed::size(), 1);
  EXPECT_EQ(distributed::node_rank(), 0);
  EXPECT_EQ(distributed::node_size(), 1);
  EXPECT_EQ(distributed::first_stop(-1).rank, -1) << "a rank that goes on stops no one";
  const auto stop = distributed::first_stop(2);
  EXPECT_EQ(stop.rank, 0);
  EXPECT_EQ(stop.exit_code, 2);
  EXPECT_EQ(distributed::first_stop(0).exit_code, 0) << "--help stops with 0";
  std::string bytes = "rows";
  distributed::broadcast_from_root(bytes);
  EXPECT_EQ(bytes, "rows");
}
