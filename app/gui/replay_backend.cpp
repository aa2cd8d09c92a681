#include "app/gui/replay_backend.h"

#include <sstream>

#ifdef SCHEDLAB_HAVE_REPLAY
#include "replay/policies/registry.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"
#endif

namespace app::gui {

namespace {
std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

class UnavailableBackend final : public ReplayBackend {
 public:
  std::vector<ReplayModelInfo> models() const override { return {}; }
  QString unavailableReason() const override {
    return QStringLiteral("This build has no replay engine (the replay library was not built).");
  }
  core::Result<std::shared_ptr<core::TraceModel>> run(const std::shared_ptr<const core::TraceModel>&,
                                                      const ReplayRequest&, std::stop_token,
                                                      const std::function<void(double)>&) const override {
    return core::Error("replay is not available in this build");
  }
};
}  // namespace

core::Result<std::vector<std::pair<std::string, std::string>>> parseAssignments(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string normalized = text;
  for (char& c : normalized)
    if (c == '\n' || c == ';') c = ',';
  std::stringstream in(normalized);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = trim(item);
    if (item.empty() || item[0] == '#') continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return core::Error("parameter '" + item + "' is not key=value");
    out.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
  }
  return out;
}

#ifdef SCHEDLAB_HAVE_REPLAY
namespace {
/// replay/: extract the recording's workload, run it through the model.
class EngineBackend final : public ReplayBackend {
 public:
  std::vector<ReplayModelInfo> models() const override {
    std::vector<ReplayModelInfo> out;
    std::vector<std::string> names = {"baseline"};
    for (const auto& p : replay::allPolicies()) names.emplace_back(p.name);
    for (const char* base : {"cfs", "eevdf"})
      for (const char* feature : {"+coresched", "+uclamp", "+coresched+uclamp"}) names.push_back(std::string(base) + feature);
    for (const auto& name : names) {
      const std::string concrete = replay::resolveBaseline(name, "");
      const auto spec = replay::parseModel(concrete);
      if (!spec) continue;
      ReplayModelInfo info;
      info.name = name;
      info.description = name == "baseline" ? "the model of the kernel that recorded the trace: cfs before Linux 6.6, "
                                              "eevdf at that release from 6.6 on"
                                            : spec->title();
      if (auto params = replay::defaultParams(concrete)) info.params = params->describe();
      out.push_back(std::move(info));
    }
    return out;
  }

  core::Result<std::shared_ptr<core::TraceModel>> run(const std::shared_ptr<const core::TraceModel>& recording,
                                                      const ReplayRequest& request, std::stop_token stop,
                                                      const std::function<void(double)>& progress) const override {
    if (progress) progress(0.02);
    replay::ReplayOptions options;
    options.topology = request.topology;
    for (const auto& [k, v] : request.params) options.params.push_back(k + "=" + v);
    if (!recording->sourceFiles.empty()) options.recordingPath = recording->sourceFiles.front();
    options.stop = stop;
    options.model = replay::resolveBaseline(request.model, recording->kernelRelease());
    auto replayed = replay::replayRecording(*recording, options, {}, progress);
    if (!replayed) return replayed.error();
    const auto& result = replayed->result;
    if (!result.model) return core::Error("the replay produced no model");
    if (progress) progress(1.0);
    return result.model;
  }
};
}  // namespace

std::shared_ptr<ReplayBackend> defaultReplayBackend() { return std::make_shared<EngineBackend>(); }
#else
std::shared_ptr<ReplayBackend> defaultReplayBackend() { return std::make_shared<UnavailableBackend>(); }
#endif

}  // namespace app::gui
