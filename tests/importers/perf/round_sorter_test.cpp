// RoundSorter: the order perf's ordered_events gives — by timestamp, ties in
// file order, nothing later than the flush limit — with per-CPU queues.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "importers/perf/round_sorter.h"

namespace {

struct PendingRecord {
  uint64_t ts;
  uint64_t key;  // increasing in file order
  bool operator<(const PendingRecord& o) const { return ts != o.ts ? ts < o.ts : key < o.key; }
};
using RoundSorter = importers::perf::RoundSorter<PendingRecord>;

std::vector<PendingRecord> flush(RoundSorter& s, uint64_t limit) {
  std::vector<PendingRecord> out;
  s.flush(limit, [&](const PendingRecord& r) { out.push_back(r); });
  return out;
}

TEST(RoundSorter, MergesCpusAndHoldsBackPastTheLimit) {
  RoundSorter s;
  uint64_t key = 0;
  for (uint64_t ts : {10, 20, 30, 40}) s.push(1, {ts, key++});
  for (uint64_t ts : {15, 25, 35}) s.push(2, {ts, key++});
  const auto first = flush(s, 26);
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[0].ts, 10u);
  EXPECT_EQ(first[1].ts, 15u);
  EXPECT_EQ(first[2].ts, 20u);
  EXPECT_EQ(first[3].ts, 25u);
  EXPECT_FALSE(s.empty());
  const auto rest = flush(s, UINT64_MAX);
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(rest[0].ts, 30u);
  EXPECT_EQ(rest[2].ts, 40u);
  EXPECT_TRUE(s.empty());
}

TEST(RoundSorter, TiesKeepFileOrder) {
  RoundSorter s;
  s.push(2, {5, 1});
  s.push(1, {5, 2});
  s.push(0, {5, 0});
  const auto out = flush(s, UINT64_MAX);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, 0u);
  EXPECT_EQ(out[1].key, 1u);
  EXPECT_EQ(out[2].key, 2u);
}

// Late records within a CPU, a CPU stream far out of order, many CPUs (heap merge):
// always the same order as a full sort.
TEST(RoundSorter, MatchesAFullSort) {
  for (int cpus : {1, 3, 40}) {
    for (int shuffle : {0, 3, 1000}) {
      std::mt19937_64 rng(static_cast<uint64_t>(cpus * 7919 + shuffle));
      RoundSorter s;
      std::vector<PendingRecord> all;
      uint64_t key = 0;
      std::vector<uint64_t> clock(static_cast<size_t>(cpus), 0);
      std::vector<std::pair<uint32_t, PendingRecord>> input;
      for (int i = 0; i < 5000; ++i) {
        const auto cpu = static_cast<uint32_t>(rng() % static_cast<uint64_t>(cpus));
        clock[cpu] += rng() % 50;
        input.push_back({cpu + 1, {clock[cpu], key++}});
      }
      // Swap neighbours (or far apart) within each CPU's stream.
      for (int i = 0; i < shuffle; ++i) {
        const size_t a = rng() % input.size(), b = std::min(input.size() - 1, a + rng() % (shuffle > 100 ? 400 : 3));
        if (input[a].first == input[b].first) std::swap(input[a].second.ts, input[b].second.ts);
      }
      for (const auto& [q, r] : input) {
        s.push(q, r);
        all.push_back(r);
      }
      std::sort(all.begin(), all.end());
      const auto out = flush(s, UINT64_MAX);
      ASSERT_EQ(out.size(), all.size());
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(out[i].ts, all[i].ts) << "cpus " << cpus << " shuffle " << shuffle << " at " << i;
        ASSERT_EQ(out[i].key, all[i].key);
      }
    }
  }
}

}  // namespace
