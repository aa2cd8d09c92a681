// What the Replay… dialog needs from the replay engine, behind a small
// interface: the models on offer with their parameters, and one call that turns
// a recording into a replayed model (on a worker thread, cancellable). The
// default backend wraps replay/ when it is built; tests plug in a fake.
#pragma once

#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/topology.h"
#include "core/trace_model.h"

namespace app::gui {

struct ReplayModelInfo {
  std::string name;
  std::string description;
  std::vector<core::ReplayParam> params;  ///< key, default value, doc
};

struct ReplayRequest {
  std::string model;
  std::vector<std::pair<std::string, std::string>> params;  ///< key=value overrides
  std::optional<core::Topology> topology;                   ///< nullopt: the recording's
};

class ReplayBackend {
 public:
  virtual ~ReplayBackend() = default;
  virtual std::vector<ReplayModelInfo> models() const = 0;
  /// Why replay is unavailable in this build (empty when it is available).
  virtual QString unavailableReason() const { return {}; }
  /// Runs on a worker thread. Returns the replayed model, or an error (bad
  /// parameter, cancelled, policy failure) with a message for the user.
  virtual core::Result<std::shared_ptr<core::TraceModel>> run(const std::shared_ptr<const core::TraceModel>& recording,
                                                              const ReplayRequest& request, std::stop_token stop,
                                                              const std::function<void(double)>& progress) const = 0;
};

/// The engine in replay/ when this build has it, else a backend that says why not.
std::shared_ptr<ReplayBackend> defaultReplayBackend();

/// "key=value" lines or comma-separated assignments to pairs; errors name the bad item.
core::Result<std::vector<std::pair<std::string, std::string>>> parseAssignments(const std::string& text);

}  // namespace app::gui
