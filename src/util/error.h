#pragma once
// One error style per layer: low layers throw these, the CLI catches them once at the command
// boundary and prints the message. Messages are meant for people: they say what was found, what
// was expected and what to do.
#include <stdexcept>
#include <string>

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

}  // namespace dbform
