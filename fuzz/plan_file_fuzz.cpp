// The saved-plan reader on any bytes: a UsageError or a plan, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plan/plan_file.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto doc = dbform::parse_plan_document(text, "fuzz.plan");
    dbform::plan_document_json(doc).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const dbform::Error&) {
  }
  return 0;
}
