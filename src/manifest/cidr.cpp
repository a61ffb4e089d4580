#include "manifest/cidr.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

namespace dbform {

namespace {

// A decimal number without sign or leading zeros ("0" itself is fine), at most `max`.
std::optional<int> parse_small_decimal(std::string_view s, int max) {
  if (s.empty() || s.size() > 3 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  int value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  if (value > max) return std::nullopt;
  return value;
}

// Strict dotted quad. inet_pton(AF_INET) would do too, but its rules vary between C libraries;
// this one matches the schema's pattern exactly.
std::optional<std::array<unsigned char, 4>> parse_ipv4(std::string_view s) {
  std::array<unsigned char, 4> bytes{};
  for (int i = 0; i < 4; ++i) {
    size_t end = i < 3 ? s.find('.') : s.size();  // the last octet takes the rest
    if (end == std::string_view::npos) return std::nullopt;
    auto octet = parse_small_decimal(s.substr(0, end), 255);
    if (!octet) return std::nullopt;
    bytes[i] = static_cast<unsigned char>(*octet);
    s.remove_prefix(i < 3 ? end + 1 : end);
  }
  return bytes;
}

// Clears the bits beyond `prefix`; returns whether any were set.
bool clear_host_bits(unsigned char* bytes, size_t size, int prefix) {
  bool any = false;
  for (size_t i = 0; i < size; ++i) {
    int keep = std::clamp(prefix - static_cast<int>(i) * 8, 0, 8);
    auto mask = static_cast<unsigned char>(keep == 0 ? 0 : 0xFF << (8 - keep));
    if (bytes[i] & ~mask) any = true;
    bytes[i] &= mask;
  }
  return any;
}

CidrCheck invalid(std::string problem) { return {false, std::move(problem), {}}; }

CidrCheck check_ipv4(std::string_view address, std::string_view prefix_text) {
  auto bytes = parse_ipv4(address);
  if (!bytes)
    return invalid("`" + std::string(address) +
                   "` is not an IPv4 address: expected four numbers 0-255 separated by dots, without leading zeros");
  auto prefix = parse_small_decimal(prefix_text, 32);
  if (!prefix) return invalid("prefix length `" + std::string(prefix_text) + "` is not a number from 0 to 32");
  CidrCheck ok{true, {}, {}};
  if (clear_host_bits(bytes->data(), bytes->size(), *prefix)) {
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, bytes->data(), buf, sizeof buf);
    ok.network_if_host_bits = std::string(buf) + "/" + std::to_string(*prefix);
  }
  return ok;
}

CidrCheck check_ipv6(std::string_view address, std::string_view prefix_text) {
  unsigned char bytes[16];
  std::string address_z(address);
  if (inet_pton(AF_INET6, address_z.c_str(), bytes) != 1)
    return invalid("`" + address_z + "` is not an IPv6 address");
  auto prefix = parse_small_decimal(prefix_text, 128);
  if (!prefix) return invalid("prefix length `" + std::string(prefix_text) + "` is not a number from 0 to 128");
  CidrCheck ok{true, {}, {}};
  if (clear_host_bits(bytes, sizeof bytes, *prefix)) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, bytes, buf, sizeof buf);
    ok.network_if_host_bits = std::string(buf) + "/" + std::to_string(*prefix);
  }
  return ok;
}

}  // namespace

CidrCheck check_cidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    return invalid("`" + std::string(text) + "` has no prefix length: expected ADDRESS/PREFIX, like 10.0.0.0/16");
  std::string_view address = text.substr(0, slash);
  std::string_view prefix = text.substr(slash + 1);
  if (address.find(':') != std::string_view::npos) return check_ipv6(address, prefix);
  return check_ipv4(address, prefix);
}

}  // namespace dbform
