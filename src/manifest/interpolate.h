#pragma once
// ${VAR} interpolation of manifest scalars. `${NAME}` is replaced by the environment variable NAME
// (letters, digits and '_', not starting with a digit); `$${` stands for a literal `${`; any other
// `$` is kept as it is. There are no defaults (`${X:-y}`): a manifest either gets a value from the
// environment or fails, so a pipeline with a missing variable never plans against a wrong id.
#include <string>
#include <string_view>
#include <vector>

#include "util/env.h"

namespace dbform {

struct InterpolationProblem {
  std::string message;  // "environment variable `PROJECT_ID` is not set"
  std::string hint;     // how to fix it
};

struct Interpolated {
  std::string text;                             // the value with every reference replaced
  bool substituted = false;                     // at least one ${NAME} was replaced
  std::vector<InterpolationProblem> problems;   // empty when the text is usable
};

Interpolated interpolate(std::string_view raw, const EnvLookup& env);

// Whether `raw` holds any `${` that interpolate() would act on (a reference or an escape). The
// reader uses it to skip the work for the common scalar without any.
inline bool has_interpolation(std::string_view raw) { return raw.find("${") != std::string_view::npos; }

}  // namespace dbform
