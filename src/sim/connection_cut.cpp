#include "sim/connection_cut.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <filesystem>
#include <string>

namespace dbform::sim {

namespace {

int port_of(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  return -1;
}

}  // namespace

bool cut_connection_silently(int local_port, int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const std::string name = entry.path().filename().string();
    int fd = -1;
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) continue;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;
    if (port_of(local) != local_port || port_of(peer) != remote_port) continue;
    ::shutdown(fd, SHUT_RDWR);
    return true;
  }
  return false;
}

}  // namespace dbform::sim
