#pragma once
// What `apply` needs to wait for services to accept connections (--wait-connectable,
// `wait_connectable: true`).
#include "manifest/model.h"
#include "plan/run.h"
#include "sql/connection_check.h"

namespace dbform::cli {

// Every project's services with --wait-connectable, else those of the projects declared
// `wait_connectable: true`; checked through libpq.
ConnectableOptions connectable_options(bool wait_connectable_flag, const Manifest& manifest);

// The libpq check, one for the process.
const ConnectionCheck& libpq_check();

}  // namespace dbform::cli
