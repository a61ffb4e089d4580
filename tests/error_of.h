#pragma once
// For unit tests that check messages: what `f` threw, or "" when it threw nothing.
#include <exception>
#include <functional>
#include <optional>
#include <string>

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// For tests that check what an error carries besides its message: a copy of the E that `f` threw,
// or nullopt when it threw nothing (anything else it throws goes on up, failing the test).
template <class E>
std::optional<E> thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  return std::nullopt;
}
