#include "core/analysis/fair_share.h"

#include "core/prefault.h"
#include "core/radix_sort.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>

namespace core::analysis {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRateEps = 1e-12;     // CPUs: rates and capacities closer than this are equal
constexpr int64_t kUnboundedDemand = -1;  // a burst still wanting a CPU when the range ends

bool wantsCpu(TaskState s) { return s == TaskState::Running || isRunnable(s); }

// Max flow on the small network source -> affinity class -> CPU -> sink (Dinic),
// in CPUs; after maxFlow() it tells which nodes still reach the sink.
class FlowNetwork {
 public:
  explicit FlowNetwork(int nodes) : m_adj(static_cast<size_t>(nodes)) {}

  void addEdge(int from, int to, double capacity) {
    auto& out = m_adj[static_cast<size_t>(from)];
    auto& in = m_adj[static_cast<size_t>(to)];
    out.push_back({to, static_cast<int>(in.size()), capacity});
    in.push_back({from, static_cast<int>(out.size()) - 1, 0.0});
  }

  double maxFlow(int source, int sink) {
    double flow = 0;
    while (levels(source, sink)) {
      m_next.assign(m_adj.size(), 0);
      while (const double pushed = push(source, sink, kInf)) flow += pushed;
    }
    return flow;
  }

  /// Nodes from which the sink is reachable in the residual network.
  std::vector<char> reachingSink(int sink) const { return residualReach(sink, true); }
  /// Nodes reachable from the source in the residual network (the source side of a minimum cut).
  std::vector<char> reachableFrom(int source) const { return residualReach(source, false); }

 private:
  struct Edge {
    int to;
    int rev;
    double capacity;  // residual
  };

  std::vector<char> residualReach(int start, bool backwards) const {
    std::vector<char> seen(m_adj.size(), 0);
    std::deque<int> todo{start};
    seen[static_cast<size_t>(start)] = 1;
    while (!todo.empty()) {
      const int v = todo.front();
      todo.pop_front();
      for (const Edge& e : m_adj[static_cast<size_t>(v)]) {
        // Backwards, e.to -> v has residual capacity when the reverse of e does.
        const double residual =
            backwards ? m_adj[static_cast<size_t>(e.to)][static_cast<size_t>(e.rev)].capacity : e.capacity;
        if (residual > kRateEps && !seen[static_cast<size_t>(e.to)]) {
          seen[static_cast<size_t>(e.to)] = 1;
          todo.push_back(e.to);
        }
      }
    }
    return seen;
  }

  bool levels(int source, int sink) {
    m_level.assign(m_adj.size(), -1);
    std::deque<int> todo{source};
    m_level[static_cast<size_t>(source)] = 0;
    while (!todo.empty()) {
      const int v = todo.front();
      todo.pop_front();
      for (const Edge& e : m_adj[static_cast<size_t>(v)])
        if (e.capacity > kRateEps && m_level[static_cast<size_t>(e.to)] < 0) {
          m_level[static_cast<size_t>(e.to)] = m_level[static_cast<size_t>(v)] + 1;
          todo.push_back(e.to);
        }
    }
    return m_level[static_cast<size_t>(sink)] >= 0;
  }

  double push(int v, int sink, double limit) {
    if (v == sink) return limit;
    auto& edges = m_adj[static_cast<size_t>(v)];
    for (size_t& i = m_next[static_cast<size_t>(v)]; i < edges.size(); ++i) {
      Edge& e = edges[i];
      if (e.capacity <= kRateEps || m_level[static_cast<size_t>(e.to)] != m_level[static_cast<size_t>(v)] + 1) continue;
      if (const double pushed = push(e.to, sink, std::min(limit, e.capacity)); pushed > 0) {
        e.capacity -= pushed;
        m_adj[static_cast<size_t>(e.to)][static_cast<size_t>(e.rev)].capacity += pushed;
        return pushed;
      }
    }
    return 0;
  }

  std::vector<std::vector<Edge>> m_adj;
  std::vector<int> m_level;
  std::vector<size_t> m_next;
};

// Tasks of one affinity class and one weight are always served alike in the
// ideal, so they share a bucket: one rate, and one clock Q (the service of a
// task that has been in the bucket since Q was 0). A task's ideal service is
// its service when it joined plus the clock's advance since, and it is done
// when the clock reaches its finish tag: per event the sweep costs O(buckets),
// not O(tasks).
struct Bucket {
  uint32_t affinityClass = 0;
  int weight = 0;
  uint32_t tasks = 0;
  double rate = 0;   // CPUs per task
  double clock = 0;  // ns of service per task
  struct Tag {
    double finish;
    uint32_t task;
  };
  // A min-heap of the finish tags of its tasks with bounded demand, one per
  // task, moved in place when a task's demand grows (IdealSweep::m_heapSlot).
  // A heap of every tag ever pushed, stale ones skipped as they surfaced,
  // held several per task, and each check cost a cache miss on the task.
  std::vector<Tag> finishes;
};

struct SweepTask {
  bool fair = false;
  int weight = 0;
  uint32_t affinityClass = 0;
  // Recorded (or replayed) schedule.
  bool wanting = false;
  bool running = false;
  int rtCpu = -1;  // RT/DL task: the CPU it occupies
  double lastFold = 0;
  double serviceNs = 0;
  double waitNs = 0;
  double maxAbsLag = 0;
  // Ideal schedule.
  bool active = false;  // has asked-for work the ideal has not served yet
  uint32_t bucket = 0;  // of its affinity class and weight
  double clockAtJoin = 0;
  double idealAtJoin = 0;  // ideal service when it joined its bucket
  double finishClock = 0;  // bucket clock at which its demand is served (kInf: unbounded)
  double activeSince = 0;
  double activeNs = 0;
  double idealNs = 0;      // while inactive
  size_t nextDemand = 0;   // index into the sweep's demands
};

// The ideal schedule of README "Fairness, defined" (Definition 2): at every
// instant the CPUs not running an RT or DL task are shared among the fair tasks
// with unserved demand so that the rates r_i <= 1 are weighted max-min fair
// under the affinity constraints (raising r_i / w_i for all alike, freezing a
// task at one CPU or when a set of its CPUs is saturated). Times are ns since
// the range start, as doubles.
class IdealSweep {
 public:
  IdealSweep(std::vector<SweepTask> tasks, std::vector<std::vector<int>> classCpus, int cpuLimit,
             std::vector<int64_t> demands)
      : m_tasks(std::move(tasks)),
        m_classCpus(std::move(classCpus)),
        m_rtOnCpu(static_cast<size_t>(cpuLimit), 0),
        m_inTopology(static_cast<size_t>(cpuLimit), 0),
        m_freeCpus(static_cast<int>(m_classCpus[0].size())),
        m_demands(std::move(demands)),
        m_heapSlot(m_tasks.size(), kNoSlot) {
    for (int cpu : m_classCpus[0]) m_inTopology[static_cast<size_t>(cpu)] = 1;
    // A task's class and weight never change: its bucket is looked up once,
    // not at each of its bursts.
    for (SweepTask& k : m_tasks)
      if (k.fair) k.bucket = bucketOf(k.affinityClass, k.weight);
  }

  const std::vector<SweepTask>& tasks() const { return m_tasks; }

  /// Starts loading the work of task u's next burst. The demands are laid out
  /// task by task and read in time order: each burst's read was a cache miss,
  /// a third of change()'s time.
  void prefetchDemand(uint32_t u) const {
    const size_t next = m_tasks[u].nextDemand;
    if (next < m_demands.size()) __builtin_prefetch(&m_demands[next]);
  }

  /// A task's state changes at t (or is first set, at the range start).
  void change(uint32_t u, bool wanting, bool running, int cpu, double t) {
    serveUntil(t);
    advance(t);
    SweepTask& k = m_tasks[u];
    if (!k.fair) {
      setRtCpu(k, running ? cpu : -1);
      return;
    }
    foldActual(k, t);
    if (wanting && !k.wanting) addDemand(u, t);
    k.wanting = wanting;
    k.running = running;
  }

  void finish(double t) {
    serveUntil(t);
    advance(t);
    for (auto& k : m_tasks) {
      if (!k.fair) continue;
      foldActual(k, t);
      if (k.active) {
        k.activeNs += t - k.activeSince;
        k.idealNs = idealOf(k);
      }
    }
  }

 private:
  double idealOf(const SweepTask& k) const {
    return k.active ? k.idealAtJoin + (m_buckets[k.bucket].clock - k.clockAtJoin) : k.idealNs;
  }

  // Lag is monotone between a task's own changes (its actual rate is 0 or 1
  // there and its ideal rate in [0, 1]), so its extremes are seen here.
  void foldActual(SweepTask& k, double t) {
    const double dt = t - k.lastFold;
    if (k.running) k.serviceNs += dt;
    else if (k.wanting) k.waitNs += dt;
    k.lastFold = t;
    k.maxAbsLag = std::max(k.maxAbsLag, std::fabs(idealOf(k) - k.serviceNs));
  }

  void setRtCpu(SweepTask& k, int cpu) {
    if (cpu >= static_cast<int>(m_rtOnCpu.size()) || (cpu >= 0 && !m_inTopology[static_cast<size_t>(cpu)])) cpu = -1;
    if (k.rtCpu == cpu) return;
    if (k.rtCpu >= 0 && --m_rtOnCpu[static_cast<size_t>(k.rtCpu)] == 0) ++m_freeCpus;
    if (cpu >= 0 && m_rtOnCpu[static_cast<size_t>(cpu)]++ == 0) --m_freeCpus;
    k.rtCpu = cpu;
    m_dirty = true;
  }

  void addDemand(uint32_t u, double t) {
    SweepTask& k = m_tasks[u];
    const int64_t work = k.nextDemand < m_demands.size() ? m_demands[k.nextDemand++] : 0;
    if (work == 0) return;
    const double more = work == kUnboundedDemand ? kInf : static_cast<double>(work);
    if (!k.active) {
      Bucket& bucket = m_buckets[k.bucket];
      if (bucket.tasks++ == 0) m_nonEmpty.push_back(k.bucket);
      k.active = true;
      k.clockAtJoin = bucket.clock;
      k.idealAtJoin = k.idealNs;
      k.finishClock = bucket.clock;
      k.activeSince = t;
      m_dirty = true;
    }
    k.finishClock += more;
    m_nextCompletionKnown = false;
    Bucket& bucket = m_buckets[k.bucket];
    const uint32_t slot = m_heapSlot[u];
    if (!std::isfinite(k.finishClock)) {
      if (slot != kNoSlot) removeTag(bucket, slot);
    } else if (slot == kNoSlot) {
      bucket.finishes.push_back({k.finishClock, u});
      siftUp(bucket, bucket.finishes.size() - 1);
    } else {
      bucket.finishes[slot].finish = k.finishClock;  // it only grows
      siftDown(bucket, slot);
    }
  }

  // The finish-tag heap of a bucket; m_heapSlot follows every move.
  void placeTag(Bucket& bucket, size_t slot, const Bucket::Tag& tag) {
    bucket.finishes[slot] = tag;
    m_heapSlot[tag.task] = static_cast<uint32_t>(slot);
  }

  void siftUp(Bucket& bucket, size_t slot) {
    const Bucket::Tag tag = bucket.finishes[slot];
    while (slot > 0) {
      const size_t parent = (slot - 1) / 2;
      if (bucket.finishes[parent].finish <= tag.finish) break;
      placeTag(bucket, slot, bucket.finishes[parent]);
      slot = parent;
    }
    placeTag(bucket, slot, tag);
  }

  void siftDown(Bucket& bucket, size_t slot) {
    const Bucket::Tag tag = bucket.finishes[slot];
    const size_t n = bucket.finishes.size();
    for (;;) {
      size_t child = 2 * slot + 1;
      if (child >= n) break;
      if (child + 1 < n && bucket.finishes[child + 1].finish < bucket.finishes[child].finish) ++child;
      if (tag.finish <= bucket.finishes[child].finish) break;
      placeTag(bucket, slot, bucket.finishes[child]);
      slot = child;
    }
    placeTag(bucket, slot, tag);
  }

  void removeTag(Bucket& bucket, size_t slot) {
    m_heapSlot[bucket.finishes[slot].task] = kNoSlot;
    const Bucket::Tag last = bucket.finishes.back();
    bucket.finishes.pop_back();
    if (slot == bucket.finishes.size()) return;
    placeTag(bucket, slot, last);
    siftDown(bucket, slot);
    siftUp(bucket, m_heapSlot[last.task]);
  }

  uint32_t bucketOf(uint32_t affinityClass, int weight) {
    auto [it, added] = m_bucketIndex.try_emplace({affinityClass, weight}, static_cast<uint32_t>(m_buckets.size()));
    if (added) {
      m_buckets.emplace_back();
      m_buckets.back().affinityClass = affinityClass;
      m_buckets.back().weight = weight;
    }
    return it->second;
  }

  // Serves the ideal up to t: every demand that completes before t leaves its
  // bucket at its completion instant, and the rates are recomputed there.
  // The next completion instant is kept until a demand or a rate changes: most
  // changes of the recorded schedule (a switch, a preemption) come before it
  // and then cost one comparison here.
  void serveUntil(double t) {
    for (;;) {
      allocateIfDirty();
      if (!m_nextCompletionKnown) findNextCompletion();
      if (m_nextCompletionAt > t) return;
      const double first = m_nextCompletionAt;
      const uint32_t firstBucket = m_nextCompletionBucket;
      m_nextCompletionKnown = false;
      advance(first);
      // The bucket whose completion was computed lets its first task go even if
      // rounding left its clock a hair short; others due at the same instant go too.
      std::vector<uint32_t>& done = m_done;
      done.assign(1, m_buckets[firstBucket].finishes.front().task);
      removeTag(m_buckets[firstBucket], 0);
      for (uint32_t b : m_nonEmpty) {
        Bucket& bucket = m_buckets[b];
        const double slack = 1e-9 * std::max(1.0, std::fabs(bucket.clock));
        while (!bucket.finishes.empty() && bucket.finishes.front().finish <= bucket.clock + slack) {
          done.push_back(bucket.finishes.front().task);
          removeTag(bucket, 0);
        }
      }
      for (uint32_t u : done) complete(u, first);
    }
  }

  void findNextCompletion() {
    m_nextCompletionAt = kInf;
    m_nextCompletionBucket = 0;
    for (uint32_t b : m_nonEmpty) {
      Bucket& bucket = m_buckets[b];
      if (bucket.finishes.empty() || bucket.rate <= 0) continue;
      const double at = m_now + std::max(0.0, bucket.finishes.front().finish - bucket.clock) / bucket.rate;
      if (at < m_nextCompletionAt) m_nextCompletionAt = at, m_nextCompletionBucket = b;
    }
    m_nextCompletionKnown = true;
  }

  void complete(uint32_t u, double t) {
    SweepTask& k = m_tasks[u];
    Bucket& bucket = m_buckets[k.bucket];
    k.idealNs = k.idealAtJoin + (k.finishClock - k.clockAtJoin);
    k.active = false;
    k.activeNs += t - k.activeSince;
    if (--bucket.tasks == 0) m_nonEmpty.erase(std::find(m_nonEmpty.begin(), m_nonEmpty.end(), k.bucket));
    m_dirty = true;
  }

  void advance(double t) {
    allocateIfDirty();
    if (t <= m_now) return;
    for (uint32_t b : m_nonEmpty) m_buckets[b].clock += m_buckets[b].rate * (t - m_now);
    m_now = t;
  }

  void allocateIfDirty() {
    if (!m_dirty) return;
    m_dirty = false;
    m_nextCompletionKnown = false;
    // Most of the time every waiting task may run anywhere (or all share one
    // class): one water fill over the buckets, without the maps of the general case.
    if (m_nonEmpty.size() == 1) {  // the water fill of one bucket, without its sort
      Bucket& only = m_buckets[m_nonEmpty.front()];
      const int cpus = freeCpusOf(only.affinityClass);
      only.rate = cpus >= static_cast<int64_t>(only.tasks)
                      ? 1.0
                      : std::min(1.0, only.weight * (cpus / (static_cast<double>(only.weight) * only.tasks)));
      return;
    }
    const uint32_t firstClass = m_nonEmpty.empty() ? 0 : m_buckets[m_nonEmpty.front()].affinityClass;
    if (std::all_of(m_nonEmpty.begin(), m_nonEmpty.end(),
                    [&](uint32_t b) { return m_buckets[b].affinityClass == firstClass; })) {
      m_byWeight.assign(m_nonEmpty.begin(), m_nonEmpty.end());
      std::sort(m_byWeight.begin(), m_byWeight.end(),
                [&](uint32_t x, uint32_t y) { return m_buckets[x].weight > m_buckets[y].weight; });
      const double lambda = m_byWeight.empty() ? 0 : waterFill(m_byWeight, freeCpusOf(firstClass));
      for (uint32_t b : m_byWeight) m_buckets[b].rate = std::min(1.0, m_buckets[b].weight * lambda);
      return;
    }
    std::map<uint32_t, std::vector<uint32_t>> byClass;  // affinity class -> its non-empty buckets
    for (uint32_t b : m_nonEmpty) byClass[m_buckets[b].affinityClass].push_back(b);
    for (auto& [c, buckets] : byClass)
      std::sort(buckets.begin(), buckets.end(),
                [&](uint32_t x, uint32_t y) { return m_buckets[x].weight > m_buckets[y].weight; });
    std::map<uint32_t, double> level;  // lambda of each class: rate = min(1, weight * lambda)
    progressiveFill(byClass, level);
    for (uint32_t b : m_nonEmpty) {
      Bucket& bucket = m_buckets[b];
      bucket.rate = std::min(1.0, bucket.weight * level[bucket.affinityClass]);
    }
  }

  int freeCpusOf(uint32_t c) const {
    if (c == 0) return m_freeCpus;
    int n = 0;
    for (int cpu : m_classCpus[c]) n += m_rtOnCpu[static_cast<size_t>(cpu)] == 0;
    return n;
  }

  // One class on `cpus` CPUs: the heaviest tasks get a whole CPU while their
  // proportional share would exceed one; the rest share what is left by weight.
  double waterFill(const std::vector<uint32_t>& buckets, int cpus) const {
    double tasks = 0, weight = 0;
    for (uint32_t b : buckets) {
      tasks += m_buckets[b].tasks;
      weight += static_cast<double>(m_buckets[b].weight) * m_buckets[b].tasks;
    }
    if (cpus >= tasks) return kInf;
    double left = cpus;
    for (uint32_t b : buckets) {
      const Bucket& bucket = m_buckets[b];
      if (bucket.weight * left < weight) break;
      left -= bucket.tasks;
      weight -= static_cast<double>(bucket.weight) * bucket.tasks;
    }
    return left / weight;
  }

  // Several classes: progressive filling. Lambda rises for every class not yet
  // frozen; between the points where some weight reaches a whole CPU the class
  // rates are linear in lambda, and the first set of classes whose CPUs
  // saturate (Hall's condition tight) is found by Dinkelbach steps over minimum
  // cuts. Those classes freeze at that lambda and leave with their CPUs.
  void progressiveFill(const std::map<uint32_t, std::vector<uint32_t>>& byClass, std::map<uint32_t, double>& level) {
    std::vector<uint32_t> open;
    for (const auto& [c, buckets] : byClass) open.push_back(c);
    std::vector<char> cpuTaken(m_rtOnCpu.size(), 0);
    for (size_t cpu = 0; cpu < m_rtOnCpu.size(); ++cpu) cpuTaken[cpu] = m_rtOnCpu[cpu] != 0;
    double lambda = 0;
    auto classRate = [&](uint32_t c, double x) {
      double r = 0;
      for (uint32_t b : byClass.at(c)) r += m_buckets[b].tasks * std::min(1.0, m_buckets[b].weight * x);
      return r;
    };
    for (int round = 0; !open.empty() && round < 4096; ++round) {
      double breakpoint = kInf;
      for (uint32_t c : open)
        for (uint32_t b : byClass.at(c))
          if (m_buckets[b].weight * lambda < 1.0 - kRateEps)
            breakpoint = std::min(breakpoint, 1.0 / m_buckets[b].weight);
      if (breakpoint == kInf) {  // every task of every open class has a whole CPU
        for (uint32_t c : open) level[c] = kInf;
        return;
      }
      // Network: source 0, classes 1..n, CPUs n+1.., sink last.
      const int n = static_cast<int>(open.size());
      const int cpuBase = n + 1;
      const int sink = cpuBase + static_cast<int>(m_rtOnCpu.size());
      auto solve = [&](double x, FlowNetwork& net) {
        double demand = 0;
        for (int i = 0; i < n; ++i) {
          const double r = classRate(open[static_cast<size_t>(i)], x);
          demand += r;
          net.addEdge(0, 1 + i, r);
          for (int cpu : m_classCpus[open[static_cast<size_t>(i)]])
            if (!cpuTaken[static_cast<size_t>(cpu)]) net.addEdge(1 + i, cpuBase + cpu, kInf);
        }
        for (size_t cpu = 0; cpu < cpuTaken.size(); ++cpu)
          if (!cpuTaken[cpu]) net.addEdge(cpuBase + static_cast<int>(cpu), sink, 1.0);
        return net.maxFlow(0, sink) >= demand - 1e-9;
      };
      double x = breakpoint;
      FlowNetwork net(sink + 1);
      bool feasible = false;
      for (int step = 0; step < 64 && !feasible; ++step) {
        net = FlowNetwork(sink + 1);
        if ((feasible = solve(x, net))) break;
        // The violated set: classes on the source side of a minimum cut, and their CPUs.
        const auto side = net.reachableFrom(0);
        double capped = 0, slope = 0, cpus = 0;
        for (int i = 0; i < n; ++i) {
          if (!side[static_cast<size_t>(1 + i)]) continue;
          for (uint32_t b : byClass.at(open[static_cast<size_t>(i)])) {
            if (m_buckets[b].weight * lambda >= 1.0 - kRateEps) capped += m_buckets[b].tasks;
            else slope += static_cast<double>(m_buckets[b].weight) * m_buckets[b].tasks;
          }
        }
        for (size_t cpu = 0; cpu < cpuTaken.size(); ++cpu) cpus += side[static_cast<size_t>(cpuBase) + cpu] != 0;
        x = slope > 0 ? std::max(lambda, (cpus - capped) / slope) : lambda;
      }
      if (!feasible) {  // rounding: lambda itself is feasible by construction
        x = lambda;
        net = FlowNetwork(sink + 1);
        solve(x, net);
      }
      if (x >= breakpoint * (1 - 1e-12)) {
        lambda = breakpoint;
        continue;
      }
      lambda = x;
      const auto live = net.reachingSink(sink);
      std::vector<uint32_t> still;
      for (int i = 0; i < n; ++i) {
        const uint32_t c = open[static_cast<size_t>(i)];
        if (live[static_cast<size_t>(1 + i)]) {
          still.push_back(c);
          continue;
        }
        level[c] = lambda;
        for (int cpu : m_classCpus[c]) cpuTaken[static_cast<size_t>(cpu)] = 1;
      }
      if (still.size() == open.size()) {  // rounding hid the tight set: freeze everything at this level
        for (uint32_t c : open) level[c] = lambda;
        return;
      }
      open = std::move(still);
    }
    for (uint32_t c : open) level[c] = lambda;
  }

  std::vector<SweepTask> m_tasks;
  std::vector<std::vector<int>> m_classCpus;  // affinity class -> its CPUs ([0]: all)
  std::vector<int> m_rtOnCpu;                 // RT/DL tasks running on each CPU
  std::vector<char> m_inTopology;
  int m_freeCpus;
  std::vector<int64_t> m_demands;  // per task, in order, the work of each burst
  static constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> m_heapSlot;  // per task, its tag's place in its bucket's heap
  std::vector<Bucket> m_buckets;
  std::map<std::pair<uint32_t, int>, uint32_t> m_bucketIndex;
  std::vector<uint32_t> m_nonEmpty;
  bool m_dirty = true;
  double m_now = 0;
  bool m_nextCompletionKnown = false;
  double m_nextCompletionAt = kInf;
  uint32_t m_nextCompletionBucket = 0;
  std::vector<uint32_t> m_byWeight, m_done;  // scratch, kept to spare an allocation per change
};

}  // namespace

std::vector<FairShare> computeFairShare(const TraceModel& m, TimeRange range) {
  const size_t threadCount = m.threads.size();
  std::vector<FairShare> out(threadCount);
  const int64_t end = std::min(range.to, m.lastTs);  // nothing is known past the trace
  if (end <= range.from || threadCount == 0) return out;
  const auto at = [&](int64_t ts) { return static_cast<double>(ts - range.from); };

  // Affinity classes: [0] is every CPU of the topology.
  std::vector<std::vector<int>> classCpus(1);
  for (const auto& c : m.topology.cpus()) classCpus[0].push_back(c.cpu);
  const int cpuLimit = std::max(m.topology.cpuLimit(), 1);
  std::map<std::vector<int>, uint32_t> classIndex{{classCpus[0], 0}};
  auto classOf = [&](const std::vector<CpuId>& affinity) -> uint32_t {
    std::vector<int> cpus;
    for (CpuId cpu : affinity)
      if (m.topology.cpu(cpu)) cpus.push_back(cpu);
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    if (cpus.empty()) return 0;  // unknown, or none of its CPUs is in the topology
    auto [it, added] = classIndex.try_emplace(cpus, static_cast<uint32_t>(classCpus.size()));
    if (added) classCpus.push_back(cpus);
    return it->second;
  };

  const auto& st = m.threadStates;
  std::vector<SweepTask> tasks(threadCount);
  std::vector<int64_t> demands;
  // At most one burst per two state rows, and one open at the end per task:
  // sized once rather than copied at each doubling.
  demands.reserve(st.ts.size() / 2 + threadCount);
  size_t demandsPrefaultMark = 0;
  std::vector<TaskState> atStart(threadCount, TaskState::Unknown);
  std::vector<int> cpuAtStart(threadCount, -1);
  // Each task's state changes inside the range: rows [nextChange, changesEnd).
  std::vector<uint32_t> nextChange(threadCount, 0), changesEnd(threadCount, 0);
  size_t changeCount = 0;
  for (size_t u = 1; u < threadCount; ++u) {
    if (!existedIn(m, Utid(static_cast<uint32_t>(u)), range)) continue;
    const SchedClass cls = schedClassOf(m.threads.prio[u], m.threads.policy[u]);
    SweepTask& k = tasks[u];
    k.fair = cls == SchedClass::Fair || cls == SchedClass::Idle;
    k.weight = fairWeight(m.threads.prio[u], m.threads.policy[u]);
    k.affinityClass = classOf(m.threads.affinity[u]);
    k.nextDemand = demands.size();
    prefaultAhead(demands, demandsPrefaultMark);
    const auto [b, e] = m.stateRowsOf(Utid(static_cast<uint32_t>(u)));
    const auto rows = st.ts.begin();
    nextChange[u] = static_cast<uint32_t>(std::upper_bound(rows + b, rows + e, range.from) - rows);
    changesEnd[u] = static_cast<uint32_t>(std::lower_bound(rows + nextChange[u], rows + e, end) - rows);
    changeCount += changesEnd[u] - nextChange[u];
    // Bursts: each maximal stretch of wanting a CPU, with the CPU time it got
    // there; one still wanting when the range ends asked for more than it got.
    bool inBurst = false;
    int64_t work = 0;
    for (uint32_t r = b; r < e; ++r) {
      const int64_t rowEnd = r + 1 < e ? st.ts[r + 1] : std::max(st.ts[r], m.threads.endTs[u]);
      if (st.ts[r] <= range.from) atStart[u] = st.state[r], cpuAtStart[u] = st.cpu[r];
      if (st.ts[r] >= end) break;
      if (rowEnd <= range.from || !k.fair) continue;
      const bool wanting = wantsCpu(st.state[r]);
      if (wanting && !inBurst) inBurst = true, work = 0;
      if (!wanting && inBurst) inBurst = false, demands.push_back(work);
      if (st.state[r] == TaskState::Running) work += std::min(rowEnd, end) - std::max(st.ts[r], range.from);
    }
    if (inBurst) demands.push_back(kUnboundedDemand);
  }

  IdealSweep sweep(std::move(tasks), std::move(classCpus), cpuLimit, std::move(demands));
  for (size_t u = 1; u < threadCount; ++u)
    if (wantsCpu(atStart[u]))
      sweep.change(static_cast<uint32_t>(u), true, atStart[u] == TaskState::Running, cpuAtStart[u], 0.0);

  // The changes in time order, one time window at a time: each window's changes
  // are gathered task by task and sorted alone (stably, so equal times keep task
  // order, as one sort of the whole range would). One sort of every change held
  // two 16-byte copies per state row: at 50M events, 1.7 GB beside a 1.1 GB model.
  // The row's state and CPU travel with it: read back through the row index
  // after the sort, they were a cache miss per change.
  struct Change {
    int64_t ts;
    uint32_t utid;
    CpuId cpu;
    TaskState state;
  };
  static_assert(sizeof(Change) == 16);
  // A window's 4 MB and the sort's scratch stay in cache between the gathering,
  // the sort and the sweep: windows of 2^20 changes made the sweep 10% slower.
  // (Much smaller ones leave the radix sort parts too small for its passes.)
  constexpr size_t kChangesPerWindow = size_t{1} << 18;
  const auto windows = static_cast<int64_t>(changeCount / kChangesPerWindow + 1);
  std::vector<Change> changes, sortScratch;
  changes.reserve(std::min(changeCount, 2 * kChangesPerWindow));
  sortScratch.reserve(changes.capacity());  // the sort trades the two buffers: both keep the room
  for (int64_t w = 1; w <= windows; ++w) {
    const int64_t windowEnd = w == windows ? end : windowBound(range.from, end, w, windows);
    changes.clear();
    for (size_t u = 1; u < threadCount; ++u)
      for (uint32_t& r = nextChange[u]; r < changesEnd[u] && st.ts[r] < windowEnd; ++r)
        changes.push_back({st.ts[r], static_cast<uint32_t>(u), st.cpu[r], st.state[r]});
    if (changes.empty()) continue;
    const int64_t first = std::min_element(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
                            return x.ts < y.ts;
                          })->ts;
    radixSortByKey(changes, sortScratch, [first](const Change& c) { return static_cast<uint64_t>(c.ts - first); });
    constexpr size_t kPrefetchAhead = 8;
    for (size_t i = 0; i < changes.size(); ++i) {
      if (i + kPrefetchAhead < changes.size()) sweep.prefetchDemand(changes[i + kPrefetchAhead].utid);
      const Change& c = changes[i];
      sweep.change(c.utid, wantsCpu(c.state), c.state == TaskState::Running, c.cpu, at(c.ts));
    }
  }
  sweep.finish(at(end));

  for (size_t u = 1; u < threadCount; ++u) {
    const SweepTask& k = sweep.tasks()[u];
    if (!k.fair) continue;
    FairShare& f = out[u];
    f.serviceNs = k.serviceNs;
    f.idealNs = k.idealNs;
    f.maxAbsLagNs = k.maxAbsLag;
    // Below 1 ns the ideal did not make it share: a task that never waited and
    // always had a whole CPU in the ideal had nothing to be fair about.
    f.competed = k.waitNs > 0 || k.activeNs - k.idealNs >= 1.0;
  }
  return out;
}

}  // namespace core::analysis
