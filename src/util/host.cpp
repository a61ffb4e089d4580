#include "util/host.h"

#include <unistd.h>

namespace dbform {

std::string hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

}  // namespace dbform
