// Durations as flags and configs give them, and Retry-After as servers send it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/http_text.h"
#include "util/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  dbform::parse_duration(text);
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'795'000'000));
  if (auto wait = dbform::parse_retry_after(text, now); wait && wait->count() < 0) __builtin_trap();
  return 0;
}
