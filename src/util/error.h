#pragma once
// One error style per layer: low layers throw these, the CLI catches them once at the command
// boundary and prints the message. Messages are meant for people: they say what was found, what
// was expected and what to do.
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

namespace dbform {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from the user: flags, addresses, manifests, state files. Exit code 1, nothing changed.
class UsageError : public Error {
 public:
  using Error::Error;
};

// What a caught exception means, for a person: the system's shortages named as such (std::bad_alloc
// says nothing to someone reading an apply's output), anything else its own message.
inline std::string describe_exception(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "the system is out of memory";
  if (auto system = dynamic_cast<const std::system_error*>(&e);
      system && system->code() == std::errc::resource_unavailable_try_again)
    return std::string("the system is short of threads or memory (") + e.what() + ")";
  return e.what();
}

}  // namespace dbform
