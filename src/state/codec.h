#pragma once
#include <string>

#include "state/model.h"
#include "util/error.h"

namespace dbform {

// A state that cannot be used: not JSON, not a dbform state, a newer version, a bad record. The
// message names the source and the problem; the file is never touched.
class StateError : public Error {
 public:
  using Error::Error;
};

// Parses a state document; `source` names it in errors (a path or a URL).
State parse_state(const std::string& text, const std::string& source);
std::string serialize_state(const State& state);

nlohmann::json record_to_json(const ResourceRecord& r);
ResourceRecord record_from_json(const nlohmann::json& j, const std::string& source, size_t index);

}  // namespace dbform
