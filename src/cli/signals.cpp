#include "cli/signals.h"

#include <signal.h>
#include <unistd.h>

namespace dbform::cli {

namespace {

std::atomic<bool> g_stop_signalled{false};

void on_stop_signal(int) {
  if (g_stop_signalled.exchange(true)) ::_exit(130);
}

}  // namespace

std::atomic<bool>& stop_flag() { return g_stop_signalled; }

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

}  // namespace dbform::cli
