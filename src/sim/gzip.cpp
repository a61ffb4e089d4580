#include "sim/gzip.h"

#include <zlib.h>

#include <cctype>
#include <stdexcept>

namespace dbform::sim {

std::string gzip(std::string_view input, int level, size_t times) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)  // +16: gzip framing
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::string out;
  char buffer[1 << 16];
  for (size_t i = 0; i <= times; ++i) {
    const bool last = i == times;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    z.avail_in = last ? 0 : static_cast<uInt>(input.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
      out.append(buffer, sizeof buffer - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

bool accepts_gzip(std::string_view header) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    const size_t semicolon = item.find(';');
    std::string coding(trim(item.substr(0, semicolon)));
    for (char& c : coding) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));  // RFC 9110: any case
    if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
    if (semicolon == std::string_view::npos) return true;
    std::string_view q = trim(item.substr(semicolon + 1));  // "q=0", "q=0.000" refuse it
    if (q.rfind("q=", 0) != 0) return true;
    q.remove_prefix(2);
    if (q.find_first_not_of("0.") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace dbform::sim
