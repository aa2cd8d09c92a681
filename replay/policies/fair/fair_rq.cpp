// The fair runqueue's arithmetic (avg_vruntime, eligibility, the tree) and
// the kernel's weight tables and fixed-point __calc_delta(), shared by CFS and
// EEVDF and exposed for unit tests.
#include <algorithm>
#include <cassert>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

namespace {

constexpr int kNiceWeights[40] = {88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
                                  9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
                                  1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
                                  110,   87,    70,    56,    45,    36,    29,    23,    18,    15};

__extension__ typedef unsigned __int128 U128;

}  // namespace

int niceToWeight(int nice) { return kNiceWeights[std::clamp(nice, -20, 19) + 20]; }

uint64_t calcDelta(uint64_t delta, uint64_t weight, uint64_t lwWeight, bool lwIsTaskWeight) {
  // Task weights carry sched_prio_to_wmult[] = 2^32 / w; load sums compute
  // WMULT_CONST / w with WMULT_CONST = 2^32 - 1 (__update_inv_weight()).
  uint64_t inv = 0xffffffffULL;
  if (lwWeight != 0) inv = lwIsTaskWeight ? (uint64_t{1} << 32) / lwWeight : 0xffffffffULL / lwWeight;
  if (inv > 0xffffffffULL) inv = 0xffffffffULL;
  uint64_t fact = weight * inv;
  int shift = 32;
  const auto factHi = static_cast<uint32_t>(fact >> 32);
  if (factHi) {
    const int fs = 32 - __builtin_clz(factHi);
    shift -= fs;
    fact >>= fs;
  }
  return static_cast<uint64_t>((static_cast<U128>(delta) * fact) >> shift);
}

std::pair<int64_t, int64_t> FairRq::sumsWithCurr(const std::vector<Entity>& ents) const {
  if (curr == kNone || !ents[curr].onRq) return {avgVruntime, avgLoad};
  const int64_t w = ents[curr].weight;
  return {avgVruntime + (ents[curr].vruntime - minVruntime) * w, avgLoad + w};
}

int64_t FairRq::avgVruntimeOf(const std::vector<Entity>& ents) const {
  const auto [avg0, ld] = sumsWithCurr(ents);
  int64_t avg = avg0;
  if (ld) {
    if (avg < 0) avg -= ld - 1;  // floor division for negative sums, as avg_vruntime() does
    avg /= ld;
  }
  return minVruntime + avg;
}

bool FairRq::eligible(const std::vector<Entity>& ents, uint32_t id) const {
  const auto [avg, ld] = sumsWithCurr(ents);
  return avg >= (ents[id].vruntime - minVruntime) * ld;
}

void FairRq::treeInsert(std::vector<Entity>& ents, uint32_t id) {
  Entity& e = ents[id];
  e.seq = ++m_seq;
  tree.insert({e.vruntime, e.seq, id, e.deadline});
  avgVruntime += (e.vruntime - minVruntime) * e.weight;
  avgLoad += e.weight;
}

void FairRq::treeErase(std::vector<Entity>& ents, uint32_t id) {
  Entity& e = ents[id];
  tree.erase({e.vruntime, e.seq, id, e.deadline});
  avgVruntime -= (e.vruntime - minVruntime) * e.weight;
  avgLoad -= e.weight;
}

void FairRq::updateMinVruntime(const std::vector<Entity>& ents) {
  int64_t v = minVruntime;
  const bool haveCurr = curr != kNone && ents[curr].onRq;
  if (haveCurr) v = ents[curr].vruntime;
  if (!tree.empty()) v = haveCurr ? std::min(v, tree.begin()->vruntime) : tree.begin()->vruntime;
  advanceMinVruntime(v);  // never backwards: min_vruntime is monotonic
}

void FairRq::advanceMinVruntime(int64_t v) {
  if (v <= minVruntime) return;
  avgVruntime -= avgLoad * (v - minVruntime);
  minVruntime = v;
}

uint32_t FairRq::earliestEligible(const std::vector<Entity>& ents) const {
  const auto [avg, ld] = sumsWithCurr(ents);
  uint32_t best = kNone;
  int64_t bestDeadline = 0;
  // Eligibility falls with vruntime, so the eligible entities are a prefix of the tree.
  for (const Key& k : tree) {
    if (avg < (k.vruntime - minVruntime) * ld) break;
    assert(k.deadline == ents[k.id].deadline);
    if (best == kNone || k.deadline < bestDeadline) best = k.id, bestDeadline = k.deadline;
  }
  return best;
}

}  // namespace replay::fair
