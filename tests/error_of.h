#pragma once
// For unit tests that check messages: what `f` threw, or "" when it threw nothing.
#include <exception>
#include <functional>
#include <string>

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
