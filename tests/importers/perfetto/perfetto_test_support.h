// Helpers for the Perfetto tests, written apart from the importer so that they
// can check it: an independent protobuf walk (a plain recursive reader over
// byte vectors, with its own varint code and zlib/zstd calls) that counts the
// ftrace events of a trace, sums each task's runtime from its sched_switch
// events and collects the process tree; and a compact_sched writer that
// re-encodes the per-event bundles of a trace in the compact form. Used by
// tests/importers/perfetto.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace perfetto_test {

using Bytes = std::vector<uint8_t>;

inline std::string testData(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/" + rel; }
inline std::string sharedTrace(const std::string& rel) { return std::string(SCHEDLAB_SHARED_TRACES) + "/" + rel; }

inline Bytes readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
inline void writeFile(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// --- a minimal reader: one field at a time, values copied out -------------------

struct PbField {
  uint32_t num = 0;
  int wire = 0;
  uint64_t v = 0;
  Bytes bytes;
};

// Throws std::runtime_error on malformed input: the tests only walk good traces.
inline std::vector<PbField> parse(const Bytes& b) {
  std::vector<PbField> out;
  size_t i = 0;
  auto varint = [&]() {
    uint64_t r = 0;
    for (int s = 0;; s += 7) {
      if (i >= b.size() || s > 63) throw std::runtime_error("bad varint");
      const uint8_t c = b[i++];
      r |= uint64_t(c & 0x7f) << s;
      if (!(c & 0x80)) return r;
    }
  };
  while (i < b.size()) {
    PbField f;
    const uint64_t key = varint();
    f.num = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<int>(key & 7);
    if (f.wire == 0) {
      f.v = varint();
    } else if (f.wire == 2) {
      const uint64_t n = varint();
      if (n > b.size() - i) throw std::runtime_error("bad length");
      f.bytes.assign(b.begin() + static_cast<long>(i), b.begin() + static_cast<long>(i + n));
      i += n;
    } else if (f.wire == 1) {
      i += 8;
    } else if (f.wire == 5) {
      i += 4;
    } else {
      throw std::runtime_error("bad wire type");
    }
    out.push_back(std::move(f));
  }
  return out;
}

inline std::vector<uint64_t> packed(const Bytes& b) {
  std::vector<uint64_t> out;
  uint64_t r = 0;
  int s = 0;
  for (uint8_t c : b) {
    r |= uint64_t(c & 0x7f) << s;
    s += 7;
    if (!(c & 0x80)) {
      out.push_back(r);
      r = 0;
      s = 0;
    }
  }
  return out;
}

inline Bytes inflateBytes(const Bytes& in) {
  Bytes out(std::max<size_t>(in.size() * 8, 1 << 16));
  z_stream s{};
  inflateInit(&s);
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = static_cast<uInt>(in.size());
  size_t done = 0;
  int rc;
  do {
    if (done == out.size()) out.resize(out.size() * 2);
    s.next_out = out.data() + done;
    s.avail_out = static_cast<uInt>(out.size() - done);
    rc = inflate(&s, Z_NO_FLUSH);
    done = out.size() - s.avail_out;
  } while (rc == Z_OK);
  inflateEnd(&s);
  out.resize(done);
  return out;
}

inline Bytes unzstdBytes(const Bytes& in) {
  const unsigned long long n = ZSTD_getFrameContentSize(in.data(), in.size());
  Bytes out(n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR ? in.size() * 20 : n);
  out.resize(ZSTD_decompress(out.data(), out.size(), in.data(), in.size()));
  return out;
}

// --- what the walk finds ----------------------------------------------------------

struct SwitchRecord {
  uint64_t ts;
  int32_t prev;
  int32_t next;
};

struct Census {
  std::map<uint32_t, uint64_t> events;  ///< FtraceEvent payload field number -> count
  uint64_t compactSwitches = 0;
  uint64_t compactWakings = 0;
  std::map<uint32_t, std::vector<SwitchRecord>> switchesByCpu;  ///< per-event form only
  std::map<uint32_t, uint64_t> firstEventTsByCpu;
  uint64_t lastEventTs = 0;
  std::map<int32_t, int32_t> tgidOfThread;         ///< process_tree threads
  std::map<int32_t, std::string> nameOfThread;     ///< process_tree threads
  std::map<int32_t, std::set<std::string>> commsInEvents;  ///< sched_switch/waking comms seen per tid
  std::set<uint64_t> ftraceStatsCpus;  ///< CPUs named by ftrace_stats (one ring buffer each)
  uint64_t wakeupsFoundActive = 0;  ///< sched_waking/wakeup/wakeup_new with success (4) 0
  uint64_t genericTaskStates = 0;   ///< GenericKernelTaskStateEvent packets (117)
  /// cpu_frequency (11) and cpu_idle (13) samples by cpu_id: (ts, state), the
  /// idle state as the kernel's u32 read signed ((u32)-1 leaves idle).
  std::map<uint32_t, std::multiset<std::pair<uint64_t, int64_t>>> frequencyByCpu, idleByCpu;
};

inline void censusOfBundle(const Bytes& bundle, Census& c) {
  uint32_t cpu = 0;
  auto fields = parse(bundle);
  for (const auto& f : fields)
    if (f.num == 1 && f.wire == 0) cpu = static_cast<uint32_t>(f.v);
  for (const auto& f : fields) {
    if (f.num == 4 && f.wire == 2) {  // compact_sched
      for (const auto& x : parse(f.bytes)) {
        if (x.num == 1) c.compactSwitches += packed(x.bytes).size();
        if (x.num == 7) c.compactWakings += packed(x.bytes).size();
      }
    }
    if (f.num != 2 || f.wire != 2) continue;
    uint64_t ts = 0;
    for (const auto& x : parse(f.bytes)) {
      if (x.num == 1) ts = x.v;
    }
    if (!c.firstEventTsByCpu.count(cpu)) c.firstEventTsByCpu[cpu] = ts;
    c.firstEventTsByCpu[cpu] = std::min(c.firstEventTsByCpu[cpu], ts);
    c.lastEventTs = std::max(c.lastEventTs, ts);
    for (const auto& x : parse(f.bytes)) {
      if (x.wire != 2 || x.num < 3) continue;
      ++c.events[x.num];
      if (x.num == 11 || x.num == 13) {  // state 1, cpu_id 2
        uint64_t state = 0, cpuId = 0;
        for (const auto& y : parse(x.bytes)) {
          if (y.num == 1) state = y.v;
          if (y.num == 2) cpuId = y.v;
        }
        auto& samples = x.num == 11 ? c.frequencyByCpu : c.idleByCpu;
        const int64_t value = x.num == 13 ? static_cast<int32_t>(static_cast<uint32_t>(state)) : static_cast<int64_t>(state);
        samples[static_cast<uint32_t>(cpuId)].emplace(ts, value);
      }
      if (x.num == 17 || x.num == 20 || x.num == 114)  // sched_wakeup, sched_waking, sched_wakeup_new: success 4
        for (const auto& y : parse(x.bytes))
          if (y.num == 4 && y.wire == 0 && y.v == 0) ++c.wakeupsFoundActive;
      if (x.num == 4) {  // sched_switch: prev_comm 1, prev_pid 2, next_comm 5, next_pid 6
        SwitchRecord s{ts, 0, 0};
        std::string prevComm, nextComm;
        for (const auto& y : parse(x.bytes)) {
          if (y.num == 2) s.prev = static_cast<int32_t>(y.v);
          if (y.num == 6) s.next = static_cast<int32_t>(y.v);
          if (y.num == 1) prevComm.assign(y.bytes.begin(), y.bytes.end());
          if (y.num == 5) nextComm.assign(y.bytes.begin(), y.bytes.end());
        }
        c.commsInEvents[s.prev].insert(prevComm);
        c.commsInEvents[s.next].insert(nextComm);
        c.switchesByCpu[cpu].push_back(s);
      }
    }
  }
}

inline void censusOfTrace(const Bytes& trace, Census& c);

inline void censusOfPacket(const Bytes& packet, Census& c) {
  for (const auto& f : parse(packet)) {
    if (f.wire != 2) continue;
    if (f.num == 1) censusOfBundle(f.bytes, c);
    if (f.num == 117) ++c.genericTaskStates;
    if (f.num == 50) censusOfTrace(inflateBytes(f.bytes), c);
    if (f.num == 133) censusOfTrace(unzstdBytes(f.bytes), c);
    if (f.num == 34) {  // ftrace_stats: cpu_stats 2 {cpu 1}
      for (const auto& s : parse(f.bytes))
        if (s.num == 2)
          for (const auto& y : parse(s.bytes))
            if (y.num == 1) c.ftraceStatsCpus.insert(y.v);
    }
    if (f.num == 2) {  // process_tree: threads 2 {tid 1, name 2, tgid 3}
      for (const auto& t : parse(f.bytes)) {
        if (t.num != 2) continue;
        int32_t tid = 0, tgid = -1;
        std::string name;
        for (const auto& y : parse(t.bytes)) {
          if (y.num == 1) tid = static_cast<int32_t>(y.v);
          if (y.num == 3) tgid = static_cast<int32_t>(y.v);
          if (y.num == 2) name.assign(y.bytes.begin(), y.bytes.end());
        }
        if (tgid > 0) c.tgidOfThread[tid] = tgid;
        if (!name.empty()) c.nameOfThread[tid] = name;
      }
    }
  }
}

inline void censusOfTrace(const Bytes& trace, Census& c) {
  for (const auto& f : parse(trace))
    if (f.num == 1 && f.wire == 2) censusOfPacket(f.bytes, c);
}

/// Runtime per tid from the sched_switch events alone: on each CPU, a task runs
/// from the switch that puts it on to the switch that takes it off; the first
/// task of a CPU from the CPU's first event, the last one to the trace's end.
inline std::map<int32_t, int64_t> runtimeFromSwitches(Census& c) {
  std::map<int32_t, int64_t> rt;
  for (auto& [cpu, sw] : c.switchesByCpu) {
    std::stable_sort(sw.begin(), sw.end(), [](const SwitchRecord& a, const SwitchRecord& b) { return a.ts < b.ts; });
    uint64_t since = c.firstEventTsByCpu[cpu];
    for (const auto& s : sw) {
      if (s.prev > 0) rt[s.prev] += static_cast<int64_t>(s.ts - since);
      since = s.ts;
    }
    if (!sw.empty() && sw.back().next > 0) rt[sw.back().next] += static_cast<int64_t>(c.lastEventTs - since);
  }
  return rt;
}

// --- the compact_sched writer -------------------------------------------------------

inline void putVarint(Bytes& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}
inline void putBytes(Bytes& out, uint32_t num, const Bytes& b) {
  putVarint(out, (uint64_t(num) << 3) | 2);
  putVarint(out, b.size());
  out.insert(out.end(), b.begin(), b.end());
}
inline void putInt(Bytes& out, uint32_t num, uint64_t v) {
  putVarint(out, uint64_t(num) << 3);
  putVarint(out, v);
}
/// A varint or length-delimited field as it was read.
inline void putField(Bytes& out, const PbField& f) {
  if (f.wire == 0)
    putInt(out, f.num, f.v);
  else
    putBytes(out, f.num, f.bytes);
}

/// The trace with every packet kept but its ftrace bundles, which `rewrite`
/// turns into what it appends to the packet (none, one or more bundles).
template <typename Rewrite>
Bytes rewriteBundles(const Bytes& trace, Rewrite rewrite) {
  Bytes out;
  for (const auto& top : parse(trace)) {
    if (top.num != 1) continue;
    Bytes packet;
    for (const auto& pf : parse(top.bytes)) {
      if (pf.num == 1 && pf.wire == 2)
        rewrite(pf.bytes, packet);
      else
        putField(packet, pf);
    }
    putBytes(out, 1, packet);
  }
  return out;
}

/// The same trace with each bundle's sched_switch and sched_waking events in
/// compact_sched form, as traced_probes writes them (src/traced/probes/ftrace/
/// compact_sched.cc): delta-encoded timestamps, a per-bundle comm table, no
/// prev_* fields. With `keepFirstSwitchPerCpu` each CPU's events up to its
/// first sched_switch stay per-event ones (in a bundle of their own before the
/// rest), so that the importer can take every compact switch's prev_* from the
/// one before it.
inline Bytes compactTrace(const Bytes& trace, bool keepFirstSwitchPerCpu) {
  std::set<uint64_t> cpusSeen;
  return rewriteBundles(trace, [&](const Bytes& original, Bytes& packet) {
    uint64_t cpu = 0;
    Bytes head, kept, first;
    std::vector<uint64_t> swTs, swState, swPid, swPrio, swComm, wkTs, wkPid, wkTarget, wkPrio, wkComm;
    std::vector<std::string> intern;
    auto internOf = [&](const Bytes& s) {
      const std::string str(s.begin(), s.end());
      auto it = std::find(intern.begin(), intern.end(), str);
      if (it != intern.end()) return static_cast<uint64_t>(it - intern.begin());
      intern.push_back(str);
      return static_cast<uint64_t>(intern.size() - 1);
    };
    for (const auto& bf : parse(original)) {
      if (bf.num == 1) cpu = bf.v;
      if (bf.num != 2) {
        if (bf.wire == 0) putInt(head, bf.num, bf.v);
        continue;
      }
      uint64_t ts = 0;
      const PbField* payload = nullptr;
      auto ev = parse(bf.bytes);
      for (const auto& x : ev) {
        if (x.num == 1) ts = x.v;
        if (x.wire == 2 && x.num >= 3) payload = &x;
      }
      const bool isSwitch = payload && payload->num == 4;
      const bool isWaking = payload && payload->num == 20;
      if (keepFirstSwitchPerCpu && !cpusSeen.count(cpu)) {
        // Up to the CPU's first switch, the events stay as they are.
        if (isSwitch) cpusSeen.insert(cpu);
        putBytes(first, 2, bf.bytes);
        continue;
      }
      if (isSwitch) {
        uint64_t state = 0, pid = 0, prio = 0;
        Bytes comm;
        for (const auto& y : parse(payload->bytes)) {
          if (y.num == 4) state = y.v;
          if (y.num == 6) pid = y.v;
          if (y.num == 7) prio = y.v;
          if (y.num == 5) comm = y.bytes;
        }
        swTs.push_back(ts);
        swState.push_back(state);
        swPid.push_back(pid);
        swPrio.push_back(prio);
        swComm.push_back(internOf(comm));
      } else if (isWaking) {
        uint64_t pid = 0, prio = 0, target = 0;
        Bytes comm;
        for (const auto& y : parse(payload->bytes)) {
          if (y.num == 2) pid = y.v;
          if (y.num == 3) prio = y.v;
          if (y.num == 5) target = y.v;
          if (y.num == 1) comm = y.bytes;
        }
        wkTs.push_back(ts);
        wkPid.push_back(pid);
        wkTarget.push_back(target);
        wkPrio.push_back(prio);
        wkComm.push_back(internOf(comm));
      } else {
        putBytes(kept, 2, bf.bytes);
      }
    }
    if (!first.empty()) {
      // The CPU's events up to its first switch, per event, in a bundle before the others.
      Bytes b;
      putInt(b, 1, cpu);
      b.insert(b.end(), first.begin(), first.end());
      putBytes(packet, 1, b);
    }
    auto column = [](const std::vector<uint64_t>& v, bool delta) {
      Bytes c;
      uint64_t prev = 0;
      for (uint64_t x : v) {
        putVarint(c, delta ? x - prev : x);
        prev = x;
      }
      return c;
    };
    Bytes compact;
    for (const auto& s : intern) putBytes(compact, 5, Bytes(s.begin(), s.end()));
    if (!swTs.empty()) {
      putBytes(compact, 1, column(swTs, true));
      putBytes(compact, 2, column(swState, false));
      putBytes(compact, 3, column(swPid, false));
      putBytes(compact, 4, column(swPrio, false));
      putBytes(compact, 6, column(swComm, false));
    }
    if (!wkTs.empty()) {
      putBytes(compact, 7, column(wkTs, true));
      putBytes(compact, 8, column(wkPid, false));
      putBytes(compact, 9, column(wkTarget, false));
      putBytes(compact, 10, column(wkPrio, false));
      putBytes(compact, 11, column(wkComm, false));
    }
    Bytes b = head;
    b.insert(b.end(), kept.begin(), kept.end());
    if (!compact.empty()) putBytes(b, 4, compact);
    putBytes(packet, 1, b);
  });
}

/// The trace as far as compact_sched can carry it, in per-event form: each
/// sched_switch's prev_pid, prev_comm and prev_prio rewritten to what the CPU's
/// switch before it put on (the compact form has no prev_* fields; a task whose
/// priority changed while it ran is switched out at another one), and without
/// SchedLab's own fields (1000 and up). The CPU's first switch keeps its
/// prev_*. `rewritten` counts the switches changed.
inline Bytes compactVisible(const Bytes& trace, uint64_t& rewritten) {
  struct Incoming {
    uint64_t pid = 0, prio = 0;
    Bytes comm;
  };
  std::map<uint64_t, Incoming> lastIn;  // by CPU
  rewritten = 0;
  return rewriteBundles(trace, [&](const Bytes& original, Bytes& packet) {
    uint64_t cpu = 0;
    for (const auto& bf : parse(original))
      if (bf.num == 1 && bf.wire == 0) cpu = bf.v;
    Bytes bundle;
    for (const auto& bf : parse(original)) {
      if (bf.num != 2) {
        putField(bundle, bf);
        continue;
      }
      Bytes event;
      for (const auto& x : parse(bf.bytes)) {
        if (x.num != 4 || x.wire != 2) {
          putField(event, x);
          continue;
        }
        // sched_switch: prev_comm 1, prev_pid 2, prev_prio 3, next_comm 5, next_pid 6, next_prio 7
        Incoming next;
        auto fields = parse(x.bytes);
        for (const auto& y : fields) {
          if (y.num == 5) next.comm = y.bytes;
          if (y.num == 6) next.pid = y.v;
          if (y.num == 7) next.prio = y.v;
        }
        Bytes sw;
        const auto known = lastIn.find(cpu);
        bool changed = false;
        for (const auto& y : fields) {
          if (known != lastIn.end() && (y.num == 1 || y.num == 2 || y.num == 3)) {
            const Incoming& in = known->second;
            if (y.num == 1) {
              changed |= y.bytes != in.comm;
              putBytes(sw, 1, in.comm);
            } else {
              const uint64_t v = y.num == 2 ? in.pid : in.prio;
              changed |= y.v != v;
              putInt(sw, y.num, v);
            }
          } else if (y.num >= 1000) {
            changed = true;
          } else {
            putField(sw, y);
          }
        }
        rewritten += changed;
        lastIn[cpu] = next;
        putBytes(event, 4, sw);
      }
      putBytes(bundle, 2, event);
    }
    putBytes(packet, 1, bundle);
  });
}

/// The trace with its packets in deflate (`zstd` false) or zstd compressed_packets, `perPacket` at a time.
inline Bytes compressedTrace(const Bytes& trace, bool zstd, size_t perPacket) {
  Bytes out, batch;
  size_t n = 0;
  auto flush = [&] {
    if (batch.empty()) return;
    Bytes packed;
    if (zstd) {
      packed.resize(ZSTD_compressBound(batch.size()));
      packed.resize(ZSTD_compress(packed.data(), packed.size(), batch.data(), batch.size(), 3));
    } else {
      uLongf len = compressBound(batch.size());
      packed.resize(len);
      compress(packed.data(), &len, batch.data(), batch.size());
      packed.resize(len);
    }
    Bytes packet;
    putBytes(packet, zstd ? 133 : 50, packed);
    putBytes(out, 1, packet);
    batch.clear();
    n = 0;
  };
  for (const auto& f : parse(trace)) {
    putBytes(batch, 1, f.bytes);
    if (++n == perPacket) flush();
  }
  flush();
  return out;
}

}  // namespace perfetto_test
