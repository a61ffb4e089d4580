#pragma once
#include <string>

namespace dbform {

// This machine's name, for lock holder records; "unknown-host" when the system will not say.
std::string hostname();

}  // namespace dbform
