#pragma once
// The stop signals of the commands that call the API and write the state (apply, preview): the
// first SIGINT, SIGTERM or SIGHUP (an SSH session that drops) sets the flag (start nothing new, end
// every wait, record what is in flight, exit 130); the second exits at once, which the intent
// journal keeps safe too. SIGPIPE is ignored for the whole process, in main.
#include <atomic>

namespace dbform::cli {

// The flag the handlers set (false until a signal arrives after install_stop_signals()).
std::atomic<bool>& stop_flag();
// Installs the handlers (again, harmlessly).
void install_stop_signals();

}  // namespace dbform::cli
