#include "util/privileges.h"

#include "util/text.h"

namespace dbform {

namespace {

struct KnownPrivilege {
  const char* name;
  int since;  // server_version_num
};

const std::vector<KnownPrivilege>& rows(GrantTarget target) {
  static const std::vector<KnownPrivilege> schema{{"USAGE", 0}, {"CREATE", 0}};
  static const std::vector<KnownPrivilege> table{{"SELECT", 0},     {"INSERT", 0},  {"UPDATE", 0},
                                                 {"DELETE", 0},     {"TRUNCATE", 0}, {"REFERENCES", 0},
                                                 {"TRIGGER", 0},    {"MAINTAIN", 170000}};
  static const std::vector<KnownPrivilege> sequence{{"USAGE", 0}, {"SELECT", 0}, {"UPDATE", 0}};
  switch (target) {
    case GrantTarget::Schema: return schema;
    case GrantTarget::Table: return table;
    case GrantTarget::Sequence: return sequence;
  }
  return schema;
}

}  // namespace

const char* grant_target_word(GrantTarget target) {
  switch (target) {
    case GrantTarget::Schema: return "schema";
    case GrantTarget::Table: return "table";
    case GrantTarget::Sequence: return "sequence";
  }
  return "schema";
}

const std::vector<std::string>& known_privileges(GrantTarget target) {
  static const auto names = [](GrantTarget t) {
    std::vector<std::string> out;
    for (const auto& row : rows(t)) out.emplace_back(row.name);
    return out;
  };
  static const std::vector<std::string> schema = names(GrantTarget::Schema), table = names(GrantTarget::Table),
                                        sequence = names(GrantTarget::Sequence);
  switch (target) {
    case GrantTarget::Schema: return schema;
    case GrantTarget::Table: return table;
    case GrantTarget::Sequence: return sequence;
  }
  return schema;
}

std::vector<std::string> all_privileges(GrantTarget target, int server_version_num) {
  std::vector<std::string> out;
  for (const auto& row : rows(target))
    if (server_version_num >= row.since) out.emplace_back(row.name);
  return out;
}

int privilege_since(GrantTarget target, std::string_view privilege) {
  for (const auto& row : rows(target))
    if (privilege == row.name) return row.since;
  return 0;
}

std::optional<std::string> canonical_privilege(GrantTarget target, std::string_view privilege) {
  const std::string word = upper(trim(privilege));
  if (word == "ALL" || word == "ALL PRIVILEGES") return std::string("ALL");
  for (const auto& row : rows(target))
    if (word == row.name) return word;
  return std::nullopt;
}

}  // namespace dbform
