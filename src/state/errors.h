#pragma once
// What a read of the state throws, apart from the codec that throws it, so that what catches it
// needs no codec.
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

// A state two of whose records name one resource: two of one kind and project with the same id (a
// hand edit, or a copy pasted twice). Acting on it could delete or overwrite the wrong database, so
// every command refuses it but those that repair it (`state list | show | rm | pull`, and a push
// over it), which take `state` as read.
class DuplicateRecords : public StateError {
 public:
  DuplicateRecords(const std::string& what, State state) : StateError(what), state(std::move(state)) {}
  State state;
};

}  // namespace dbform
