// `schedlab-cli fidelity`: the identity replay of many recordings at once, as
// one table - each recording replayed through the model of the kernel that
// recorded it (or --model) on its recorded topology, and every fidelity metric
// with its verdict. The README's fidelity table is this command's output.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "app/cli/cli.h"
#include "core/analysis/fidelity.h"
#include "core/json_writer.h"
#include "replay/policies/registry.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"

namespace app::cli {

namespace {

namespace fs = std::filesystem;

const char* kHelp =
    "usage: schedlab-cli fidelity PATH... [--model MODEL] [--formats LIST] [--param K=V]... [--seeds N] [--json]\n"
    "Replays each recording through MODEL (default baseline: the model of the kernel that recorded\n"
    "it) on its recorded topology and prints the fidelity of every replay as one table: per metric\n"
    "the replay/recorded ratio (or the measure its bound applies to) and whether it is within the\n"
    "identity bounds (README \"Replay fidelity\"). A PATH is a trace, or a folder whose recordings\n"
    "(trace files in it and in its subfolders, one level down) are all taken. The table's last line\n"
    "counts, per metric, the replays that failed it.\n"
    "  --formats LIST   which files of a recording folder: any of dat,perf,txt,script,ctf (ctf: its\n"
    "                   ctf/ folder, as perf data convert --to-ctf writes it); default dat,perf\n"
    "  --param K=V      a model parameter for every replay (repeatable; as replay --param)\n"
    "  --seeds N        replay each recording with seed=1..N (the draws of the measured wakeup delays):\n"
    "                   the table shows seed 1 and adds each seed's count of failed metrics, and the\n"
    "                   sums per seed over all recordings; a verdict that changes with the seed is\n"
    "                   within the replay's own noise\n"
    "  --json           one validation.fidelity block per recording (per recording and seed, with \"seed\",\n"
    "                   under --seeds)\n"
    "Exit codes: 0 every replay ran (whatever the verdicts), 1 a trace could not be read or replayed,\n"
    "2 bad usage.\n";

// The columns of the table: a metric key and its heading.
struct Column {
  const char* key;
  const char* heading;
};
constexpr Column kColumns[] = {
    {"makespan_ns", "makespan"},
    {"switches_voluntary", "vol sw"},
    {"switches_involuntary", "invol sw"},
    {"migrations", "migr"},
    {"wakeup_latency_p50_ns", "lat p50"},
    {"wakeup_latency_p99_ns", "lat p99"},
    {"wakeup_latency_ks", "lat KS"},
    {"sched_delay_p50_ns", "delay p50"},
    {"sched_delay_p99_ns", "delay p99"},
    {"sched_delay_ks", "delay KS"},
    {"task_cpu_share_pp", "share pp"},
};

std::string cell(const core::analysis::FidelityMetric* m) {
  if (!m) return "-";
  char buf[48];
  const char* mark = m->verdict == core::analysis::Verdict::Fail ? " x" : "";
  if (m->unit == core::analysis::FidelityMetric::Unit::Distance || m->unit == core::analysis::FidelityMetric::Unit::Pp)
    std::snprintf(buf, sizeof buf, "%.2f%s", m->measure, mark);
  else if (m->ratio)
    std::snprintf(buf, sizeof buf, "%.2f%s", *m->ratio, mark);
  else
    std::snprintf(buf, sizeof buf, "%s%s", m->replayed && *m->replayed == 0 ? "0/0" : "n/a", mark);
  return buf;
}

// "| a | b |" rows under a "|---|---|" line after the first, each column as
// wide as its widest cell.
void printTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (size_t r = 0; r < rows.size(); ++r) {
    out << "|";
    for (size_t c = 0; c < rows[r].size(); ++c)
      out << " " << rows[r][c] << std::string(width[c] - rows[r][c].size(), ' ') << " |";
    out << "\n";
    if (r > 0) continue;
    out << "|";
    for (size_t c = 0; c < rows[r].size(); ++c) out << std::string(width[c] + 2, '-') << "|";
    out << "\n";
  }
}

std::vector<std::string> recordingsIn(const std::string& path, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<fs::path> dirs = {path};
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin() + 1, dirs.end());
  for (const auto& d : dirs)
    for (const std::string& n : names) {
      // A CTF trace is a folder: `perf data convert --to-ctf` writes ctf/metadata beside its streams.
      const bool found = n == "ctf" ? fs::is_regular_file(d / n / "metadata", ec) : fs::is_regular_file(d / n, ec);
      if (found) out.push_back((d / n).string());
    }
  return out;
}

}  // namespace

int fidelityCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"--model", "--formats", "--param", "--seeds"}, {"--json", "--help"}, error);
  if (!args) {
    err << "schedlab-cli fidelity: " << error << " (see --help)\n";
    return kExitUsage;
  }
  if (args->flag("--help")) {
    out << kHelp;
    return kExitOk;
  }
  if (args->positional().empty()) {
    err << "schedlab-cli fidelity: expected at least one PATH (see --help)\n";
    return kExitUsage;
  }
  const std::string requested = args->value("--model").value_or("baseline");
  if (auto spec = replay::parseModel(replay::resolveBaseline(requested, "")); !spec) {
    err << "schedlab-cli fidelity: " << spec.error().message() << "\n";
    return kExitUsage;
  }
  std::vector<std::string> names;
  const std::string formats = args->value("--formats").value_or("dat,perf");
  for (size_t pos = 0; pos <= formats.size();) {
    const size_t comma = std::min(formats.find(',', pos), formats.size());
    const std::string f = formats.substr(pos, comma - pos);
    pos = comma + 1;
    if (f == "dat") names.push_back("trace.dat");
    else if (f == "perf") names.push_back("perf.data");
    else if (f == "txt") names.push_back("trace.txt");
    else if (f == "script") names.push_back("perf-script.txt");
    else if (f == "ctf") names.push_back("ctf");
    else {
      err << "schedlab-cli fidelity: --formats takes dat, perf, txt, script and ctf (not '" << f << "')\n";
      return kExitUsage;
    }
  }
  int seeds = 0;  // 0: the parameters' own seed, one replay each
  if (const auto s = args->value("--seeds")) {
    char* end = nullptr;
    const long n = std::strtol(s->c_str(), &end, 10);
    if (s->empty() || *end != '\0' || n < 1 || n > 1000) {
      err << "schedlab-cli fidelity: --seeds takes a count from 1 to 1000 (not '" << *s << "')\n";
      return kExitUsage;
    }
    for (const std::string& p : args->values("--param"))
      if (p.rfind("seed=", 0) == 0) {
        err << "schedlab-cli fidelity: --seeds sets the seed of each replay; leave out --param " << p << "\n";
        return kExitUsage;
      }
    seeds = static_cast<int>(n);
  }
  const int replays = std::max(seeds, 1);  // per recording
  std::vector<std::string> traces;
  for (const std::string& p : args->positional())
    for (std::string& t : recordingsIn(p, names)) traces.push_back(std::move(t));
  if (traces.empty()) {
    err << "schedlab-cli fidelity: no recording (" << formats << ") under the given paths\n";
    return kExitFailure;
  }

  const bool json = args->flag("--json");
  core::JsonWriter j;
  if (json) j.beginArray();
  // The table is printed once every row is known, each column as wide as its
  // widest cell: a cut name or release would name another file or kernel.
  std::vector<std::vector<std::string>> table;
  {
    std::vector<std::string> header = {"recording", "model"};
    for (const Column& c : kColumns) header.emplace_back(c.heading);
    header.emplace_back("verdict");
    if (seeds > 0) header.push_back("failed, seeds 1-" + std::to_string(seeds));
    table.push_back(std::move(header));
  }
  std::vector<size_t> failedPerSeed(static_cast<size_t>(replays), 0);
  // Per metric key, in the order the metrics come: the replays that failed it.
  std::vector<std::pair<std::string, size_t>> failedPerMetric;
  int status = kExitOk;
  const auto noArgs = *Args::parse({}, {}, {}, error);
  for (const std::string& path : traces) {
    bool failed = false;
    auto recorded = loadTrace(path, noArgs, err, failed);
    if (!recorded) {
      status = kExitFailure;
      continue;
    }
    replay::ReplayOptions o;
    o.model = replay::resolveBaseline(requested, recorded->kernelRelease());
    // One replay per seed; the row shows the first.
    std::vector<core::analysis::Fidelity> fidelities;
    std::string release;
    for (int seed = 1; seed <= replays; ++seed) {
      o.params = args->values("--param");
      if (seeds > 0) o.params.push_back("seed=" + std::to_string(seed));
      auto replayed = replay::replayRecording(*recorded, o);
      if (!replayed) {
        err << path << ": " << replayed.error().message() << "\n";
        status = kExitFailure;
        break;
      }
      for (const auto& p : replayed->result.params)
        if (p.key == "release") release = " " + p.value;
      fidelities.push_back(*replayed->result.validation.fidelity);
      failedPerSeed[static_cast<size_t>(seed - 1)] += fidelities.back().failed();
      for (const auto& m : fidelities.back().metrics) {
        auto it = std::find_if(failedPerMetric.begin(), failedPerMetric.end(),
                               [&](const auto& kv) { return kv.first == m.key; });
        if (it == failedPerMetric.end()) it = failedPerMetric.insert(failedPerMetric.end(), {m.key, 0});
        it->second += m.verdict == core::analysis::Verdict::Fail;
      }
      if (json) {
        j.beginObject();
        j.field("recording", path);
        j.field("model", o.model + release);
        if (seeds > 0) j.field("seed", static_cast<int64_t>(seed));
        core::analysis::writeFidelityJson(j, fidelities.back(), 0);
        j.endObject();
      }
    }
    if (json || fidelities.size() != static_cast<size_t>(replays)) continue;
    const auto& f = fidelities.front();
    fs::path shown = path;
    std::vector<std::string> row = {(shown.parent_path().filename() / shown.filename()).string(), o.model + release};
    for (const Column& c : kColumns) row.push_back(cell(f.metric(c.key)));
    row.push_back(std::string(f.overall() == core::analysis::Verdict::Pass ? "pass " : "fail ") +
                  std::to_string(f.failed()));
    if (seeds > 0) {
      std::string perSeed;
      for (const auto& each : fidelities) {
        if (!perSeed.empty()) perSeed += ' ';
        perSeed += std::to_string(each.failed());
      }
      row.push_back(std::move(perSeed));
    }
    table.push_back(std::move(row));
  }
  if (json) {
    j.endArray();
    out << j.str() << "\n";
  } else {
    printTable(out, table);
    out << "\nRatios replay/recorded; KS and share: the measure itself; x: outside the bound "
           "(makespan ±10%, switches ±15% / ±30%, migrations x2, p50 ±30% or ±2 us, p99 x2, KS <= 0.25, "
           "share <= 2 pp); verdict: failed metrics.\n";
    if (seeds > 0) {
      size_t total = 0;
      out << "Failed metrics per seed, summed over the recordings:";
      for (size_t n : failedPerSeed) {
        out << " " << n;
        total += n;
      }
      out << " (" << total << " over " << seeds << " seeds)\n";
    }
    // Which metrics fail, whatever the recording: where the model stands, metric by metric.
    out << "Failed replays per metric (" << (seeds > 0 ? "recordings x seeds" : "recordings") << "):";
    bool any = false;
    for (const auto& [key, count] : failedPerMetric)
      if (count) out << (any ? ", " : " ") << key << " " << count, any = true;
    out << (any ? "\n" : " none\n");
  }
  return status;
}

}  // namespace app::cli
