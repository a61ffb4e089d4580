#pragma once
// CIDR blocks as the manifest's VPC `cidr` accepts them: IPv4 "10.0.0.0/16" (four decimal octets
// 0-255 without leading zeros, prefix 0-32) or IPv6 "fd00::/8" (any form inet_pton accepts,
// prefix 0-128). The JSON Schema's patterns describe exactly the same set.
#include <string>
#include <string_view>

namespace dbform {

struct CidrCheck {
  bool valid = false;
  std::string problem;  // when not valid: what is wrong, for a person
  // When valid but bits are set beyond the prefix (10.0.0.1/16): the network that was probably
  // meant ("10.0.0.0/16"). Empty otherwise. Worth a warning, not an error.
  std::string network_if_host_bits;
};

CidrCheck check_cidr(std::string_view text);

}  // namespace dbform
