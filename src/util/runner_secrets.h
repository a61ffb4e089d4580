#pragma once
// The runner's own secrets that reach dbform without being one of its keys: the state database's
// password (in DBFORM_STATE or --state, as a URL or libpq keywords), libpq's PGPASSWORD and the
// passwords of libpq's password file. A manifest value may hold none of them, whatever the
// manifest declares: a `${NAME}` holding one would print it in a plan or a pull request's comment.
#include <string>
#include <utility>
#include <vector>

#include "util/env.h"

namespace dbform {

// Notes a state location given on the command line (--state), so that its password counts too.
void note_state_location(const std::string& where);

// Each such secret (value, where it comes from, e.g. "the password of DBFORM_STATE"), read now:
// the password of DBFORM_STATE and of every noted --state, PGPASSWORD, and each password of the
// file PGPASSFILE names (else ~/.pgpass). Never throws; what cannot be read holds none.
std::vector<std::pair<std::string, std::string>> runner_secrets(const EnvLookup& env);

}  // namespace dbform
