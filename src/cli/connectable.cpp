#include "cli/connectable.h"

#include <memory>

namespace dbform::cli {

const ConnectionCheck& libpq_check() {
  static const std::unique_ptr<ConnectionCheck> check = libpq_connection_check();
  return *check;
}

ConnectableOptions connectable_options(bool wait_connectable_flag, const Manifest& manifest) {
  ConnectableOptions options;
  for (const auto& project : manifest.projects)
    if (wait_connectable_flag || project.wait_connectable.value_or(false)) options.projects.insert(project.id);
  if (!options.projects.empty()) options.check = &libpq_check();
  return options;
}

}  // namespace dbform::cli
