#include "sim/gzip.h"

#include <zlib.h>

#include <cctype>
#include <optional>
#include <stdexcept>

#include "util/text.h"

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

namespace {

// The weight of one `coding;param=...;q=...` item: its q parameter (any case, any place among the
// parameters), 1 when it has none. Only whether it is above zero matters here.
bool weighs_above_zero(std::string_view params) {
  while (!params.empty()) {
    const size_t semicolon = params.find(';');
    const std::string param = lower(trim(params.substr(0, semicolon)));
    params = semicolon == std::string_view::npos ? std::string_view{} : params.substr(semicolon + 1);
    if (param.rfind("q=", 0) == 0) return param.find_first_not_of("0.", 2) != std::string::npos;
  }
  return true;
}

}  // namespace

bool accepts_gzip(std::string_view header) {
  // RFC 9110 12.5.3: codings are case-insensitive, and a coding named outright wins over `*`.
  std::optional<bool> named, any;
  while (!header.empty()) {
    const size_t comma = header.find(',');
    const std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    const size_t semicolon = item.find(';');
    const std::string coding = lower(trim(item.substr(0, semicolon)));
    const bool weighed = weighs_above_zero(semicolon == std::string_view::npos ? "" : item.substr(semicolon + 1));
    if (coding == "gzip" || coding == "x-gzip") named = named.value_or(false) || weighed;
    else if (coding == "*") any = weighed;
  }
  return named ? *named : any.value_or(false);
}

}  // namespace dbform::sim
