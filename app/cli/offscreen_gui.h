// The QGuiApplication that `render` and `report` need for fonts and painting,
// never a display: the offscreen platform unless the caller chose one. Built
// only when the CLI has the renderer or the report generator (Qt present).
#pragma once

#include <memory>

#include <QGuiApplication>

namespace app::cli {

/// A new offscreen QGuiApplication, or null when one already exists (tests, GUI).
std::unique_ptr<QGuiApplication> makeOffscreenGuiApp();

}  // namespace app::cli
