// What the API client does with an answer body: bounded parsing with unknown fields skipped, the
// service, VPC and auth-info mappings (single objects and lists), and error-body summaries.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/http_text.h"
#include "api/models.h"
#include "util/error.h"
#include "util/json_limits.h"

using namespace dbform;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  summarize_error_body(body);
  std::string problem;
  nlohmann::json j = parse_json_within(body, JsonLimits{body.size(), kMaxAnswerDepth, &api_field_names()}, problem);
  if (j.is_discarded()) return 0;
  const nlohmann::json items = j.is_array() ? j : nlohmann::json::array({j});
  for (const auto& item : items) {
    for (auto parse : {+[](const nlohmann::json& x) { parse_service(x); }, +[](const nlohmann::json& x) { parse_vpc(x); },
                       +[](const nlohmann::json& x) { parse_auth_info(x); }}) {
      try {
        parse(item);
      } catch (const Error&) {
      }
    }
  }
  return 0;
}
