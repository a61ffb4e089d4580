#pragma once
// Located diagnostics, collected in one pass so a user sees every problem at once.
#include <string>
#include <vector>

namespace dbform {

struct Location {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown

  std::string str() const;  // "file:line:col", "file:line" or "file"
};

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  Location location;
  std::string field;    // dotted path of the offending field, e.g. projects[0].services[2].cpu_millis
  std::string message;  // what was found and what was expected
  std::string hint;     // optional: how to fix it ("did you mean `region_code`?")

  std::string str() const;  // "file:3:5: error: projects[0].name: message (hint)"
};

class Diagnostics {
 public:
  void error(Location loc, std::string field, std::string message, std::string hint = {});
  void warning(Location loc, std::string field, std::string message, std::string hint = {});
  void add(Diagnostic d) { items_.push_back(std::move(d)); }

  bool has_errors() const;
  size_t error_count() const;
  const std::vector<Diagnostic>& items() const { return items_; }
  // Every diagnostic on its own line, in the order they were found.
  std::string str() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace dbform
