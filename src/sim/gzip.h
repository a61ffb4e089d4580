// gzip compression (zlib) for the simulator's answers.
#pragma once

#include <string>
#include <string_view>

namespace dbform::sim {

// `input` written `times` times over, compressed into one gzip member at zlib's `level` (1 to 9).
std::string gzip(std::string_view input, int level, size_t times = 1);

// Whether an Accept-Encoding header value accepts gzip (named, or `*`, with a q-value above 0).
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace dbform::sim
