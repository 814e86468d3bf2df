// SIGTERM, SIGINT and SIGHUP quit the app the ordinary way (the event loop ends, the window closes,
// its runs' temporary folder is removed) instead of killing it where it stands.
#pragma once

class QObject;

namespace attnscope::gui {

// Installs the handlers; `parent` owns the notifier that quits the application.
void quitOnSignals(QObject* parent);

}  // namespace attnscope::gui
