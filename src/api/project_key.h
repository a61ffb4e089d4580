#pragma once
// The API key a project's calls are made with, as the engine takes it (ops/keys.h finds it).
#include <string>

namespace dbform {

struct ProjectKey {
  std::string key;
  std::string variable;  // where it came from, for messages (never the key itself)
};

}  // namespace dbform
