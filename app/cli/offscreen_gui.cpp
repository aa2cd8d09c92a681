#include "app/cli/offscreen_gui.h"

#include <QString>

namespace app::cli {

std::unique_ptr<QGuiApplication> makeOffscreenGuiApp() {
  if (QCoreApplication::instance()) return nullptr;
  // The offscreen platform warns about XDG_RUNTIME_DIR, which a PNG or a PDF never needs.
  static QtMessageHandler previous =
      qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& message) {
        if (message.startsWith(QLatin1String("QStandardPaths:"))) return;
        if (previous) previous(type, context, message);
      });
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // QGuiApplication keeps references to argc/argv for its whole life.
  static int qtArgc = 1;
  static char qtArg0[] = "schedlab-cli";
  static char* qtArgv[] = {qtArg0, nullptr};
  return std::make_unique<QGuiApplication>(qtArgc, qtArgv);
}

}  // namespace app::cli
