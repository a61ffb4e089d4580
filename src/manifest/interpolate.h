#pragma once
// ${NAME} interpolation of manifest scalars. `${NAME}` is replaced by the environment variable
// DBFORM_VAR_NAME and by no other variable (as Terraform reads `var.x` only from TF_VAR_x): a
// pull request's manifest runs in the pipeline's environment, and may read only what the pipeline
// set for it, never a token or key that happens to be there. NAME is letters, digits and '_', not
// starting with a digit, and not itself a DBFORM_ variable; `$${` stands for a literal `${`; any
// other `$` is kept as it is. There are no defaults (`${X:-y}`): a manifest either gets a value
// from the environment or fails, so a pipeline with a missing variable never plans against a
// wrong id.
#include <string>
#include <string_view>
#include <vector>

#include "util/env.h"

namespace dbform {

// What `${NAME}` reads: kManifestVariablePrefix + NAME.
inline constexpr std::string_view kManifestVariablePrefix = "DBFORM_VAR_";

struct InterpolationProblem {
  std::string message;  // "environment variable `DBFORM_VAR_PROJECT_ID` (read by ${PROJECT_ID}) is not set"
  std::string hint;     // how to fix it
};

struct Interpolated {
  std::string text;                             // the value with every reference replaced
  bool substituted = false;                     // at least one ${NAME} was replaced
  std::vector<InterpolationProblem> problems;   // empty when the text is usable
};

// `env` is asked for DBFORM_VAR_NAME; only when that is unset is it asked for NAME as well, to
// tell whoever set NAME what to set instead (its value is never used).
Interpolated interpolate(std::string_view raw, const EnvLookup& env);

// Whether `raw` holds any `${` that interpolate() would act on (a reference or an escape). The
// reader uses it to skip the work for the common scalar without any.
inline bool has_interpolation(std::string_view raw) { return raw.find("${") != std::string_view::npos; }

}  // namespace dbform
