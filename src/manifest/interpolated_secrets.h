#pragma once
// The secrets a manifest's ${NAME} may touch: the variables each file's interpolation read are
// recorded, and once every file is merged (api_key_env may be in any file) interpolating a key is
// an error and no diagnostic shows the value of a secret.
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "manifest/value_reader.h"
#include "util/diagnostics.h"
#include "util/env.h"

namespace dbform {

// Every variable a file's ${...} read, and what it held.
struct EnvUse {
  std::string file, name;
  std::optional<std::string> value;
};

// `env`, recording in `uses` the DBFORM_VAR_ variables `file` read. interpolate() also asks for
// NAME when DBFORM_VAR_NAME is unset, only to say what to set: that value is never used, so it is
// no use of the manifest's.
EnvLookup recording_uses(const EnvLookup& env, std::vector<EnvUse>& uses, const std::string& file);

// Adds to `diags` what `found` holds (the merged files' problems) after the errors of a key
// variable interpolated (`uses`), each fit to show: none quotes the value of a secret (the
// projects' API keys, the passphrases, the runner's secrets), and one about a value interpolated
// with a secret in it (`interpolated`) is replaced whole. Every secret's value is remembered, so
// that any text shown later masks it.
void add_hiding_secrets(const Manifest& manifest, const EnvLookup& env, const std::vector<EnvUse>& uses,
                        const std::vector<InterpolatedValue>& interpolated, Diagnostics& found, Diagnostics& diags);

}  // namespace dbform
