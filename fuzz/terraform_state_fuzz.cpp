// The Terraform state reader of `import --from-terraform` on any bytes, then the mapping to
// declarations and the manifest and removed blocks written from it: only UsageError (and Error for
// a manifest that would not read back) may come out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "manifest/terraform_mapping.h"
#include "util/error.h"

using namespace dbform;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const std::map<std::string, std::string> projects = {{"", "acme"}, {"eu", "acme-eu"}};
  try {
    const TerraformState state = parse_terraform_state(text, "fuzz.tfstate");
    const TerraformMapping mapping = map_terraform_state(state, projects, "fuzz.tfstate");
    terraform_removed_blocks(mapping.moves, "fuzz.tfstate");
    for (const char* project : {"acme", "acme-eu"}) {
      std::vector<FoundResource> found;
      for (const auto& m : mapping.moves)
        if (m.project == project) found.push_back(m.found);
      if (!found.empty()) generated_manifest(project, found, "fuzz.yaml", "# fuzz\n");
    }
  } catch (const Error&) {
  }
  return 0;
}
