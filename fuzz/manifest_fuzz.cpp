// The manifest loader on any bytes: only diagnostics, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "manifest/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "DBFORM_VAR_PROJECT_ID") return std::string("p1");  // ${PROJECT_ID}
    if (name == "DBFORM_VAR_KEY_COPY") return std::string("fuzz-key-123456");  // a secret's copy: errors hide it
    if (name == "DBFORM_API_KEY") return std::string("fuzz-key-123456");
    return std::nullopt;
  };
  dbform::Diagnostics diags;
  dbform::load_manifest_text("fuzz.yaml", text, env, diags);
  return 0;
}
