#include "sql/objects.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "util/error.h"
#include "util/privileges.h"
#include "util/text.h"

namespace dbform {

namespace {

std::string listed_or(const std::vector<std::string>& words, const std::string& last_separator) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? last_separator : ", ";
    out += words[i];
  }
  return out;
}

void refuse_nul(const std::string& text, const char* what) {
  if (text.find('\0') != std::string::npos)
    throw Error(std::string("a ") + what + " holds a NUL character, which PostgreSQL cannot store");
}

}  // namespace

GrantTarget grant_target(DbGrant::On on) {
  switch (on) {
    case DbGrant::On::Schema: return GrantTarget::Schema;
    case DbGrant::On::AllSequences:
    case DbGrant::On::Sequence: return GrantTarget::Sequence;
    case DbGrant::On::AllTables:
    case DbGrant::On::Table: return GrantTarget::Table;
  }
  return GrantTarget::Schema;
}

// PostgreSQL's GRANT page, per object type, in its order (util/privileges.h, which the manifest
// checks a grant's list against too).
std::vector<std::string> privileges_for(DbGrant::On on, int server_version_num) {
  return all_privileges(grant_target(on), server_version_num == 0 ? std::numeric_limits<int>::max() : server_version_num);
}

std::vector<std::string> expand_all(DbGrant::On on, int server_version_num) {
  return privileges_for(on, server_version_num);
}

std::string on_word(DbGrant::On on) {
  switch (on) {
    case DbGrant::On::Schema: return "schemas";
    case DbGrant::On::AllTables: return "tables";
    case DbGrant::On::AllSequences: return "sequences";
    case DbGrant::On::Table: return "table";
    case DbGrant::On::Sequence: return "sequence";
  }
  return "objects";
}

std::string privilege_error(DbGrant::On on, const std::string& privilege, int server_version_num) {
  const std::string p = upper(privilege);
  const auto allowed = privileges_for(on, server_version_num);
  if (p == "ALL" || std::find(allowed.begin(), allowed.end(), p) != allowed.end()) return "";
  std::string word = on_word(on);
  if (word.back() != 's') word += "s";
  std::string why = "'" + privilege + "' is not a privilege on " + word;
  if (grant_target(on) == GrantTarget::Table && privilege_since(GrantTarget::Table, p) > server_version_num)
    why += " before PostgreSQL 17 (this server's version number is " + std::to_string(server_version_num) + ")";
  auto named = allowed;
  named.push_back("ALL");
  return why + ": allowed are " + listed_or(named, " or ");
}

std::vector<std::string> normalize_privileges(DbGrant::On on, const std::vector<std::string>& privileges,
                                              int server_version_num) {
  std::vector<std::string> out;
  for (const auto& p : privileges) {
    if (std::string why = privilege_error(on, p, server_version_num); !why.empty()) throw Error(why);
    if (upper(p) == "ALL") {
      for (const auto& each : expand_all(on, server_version_num)) out.push_back(each);
    } else {
      out.push_back(upper(p));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string quote_ident(const std::string& name) {
  refuse_nul(name, "name");
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// With a backslash in it, the E'' form (backslashes doubled) reads the same whatever
// standard_conforming_strings says; otherwise the plain form, which every setting reads alike.
std::string quote_literal(const std::string& value) {
  refuse_nul(value, "value");
  const bool escaped = value.find('\\') != std::string::npos;
  std::string out = escaped ? "E'" : "'";
  for (char c : value) {
    if (c == '\'' || (escaped && c == '\\')) out += c;
    out += c;
  }
  return out + "'";
}

std::string text_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    refuse_nul(values[i], "name");
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

namespace {

// PostgreSQL's parameters whose value is a list of names (GUC_LIST_QUOTE); those of identifiers
// fold an unquoted element to lower case, as PostgreSQL's SplitIdentifierString does.
bool list_parameter(const std::string& name, bool* fold) {
  const std::string n = lower(name);
  *fold = n == "search_path" || n == "temp_tablespaces";
  return *fold || n == "session_preload_libraries" || n == "local_preload_libraries" || n == "shared_preload_libraries";
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The elements of a list written as postgresql.conf takes it; nothing when it is not one.
std::optional<std::vector<std::string>> list_elements(const std::string& value, bool fold) {
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = value.size();
  for (;;) {
    while (i < n && blank(value[i])) ++i;
    std::string element;
    if (i < n && value[i] == '"') {
      for (++i;; ++i) {
        if (i >= n) return std::nullopt;  // not closed
        if (value[i] == '"') {
          if (i + 1 < n && value[i + 1] == '"') ++i;
          else break;
        }
        element += value[i];
      }
      ++i;
    } else {
      while (i < n && value[i] != ',' && value[i] != '"' && !blank(value[i])) element += value[i++];
      if (fold) element = lower(element);
    }
    if (element.empty()) return std::nullopt;
    out.push_back(std::move(element));
    while (i < n && blank(value[i])) ++i;
    if (i == n) return out;
    if (value[i++] != ',') return std::nullopt;
  }
}

}  // namespace

bool same_setting_name(const std::string& a, const std::string& b) { return lower(a) == lower(b); }

bool same_setting_value(const std::string& name, const std::string& a, const std::string& b) {
  bool fold = false;
  if (a == b || !list_parameter(name, &fold)) return a == b;
  auto ea = list_elements(a, fold), eb = list_elements(b, fold);
  return ea && eb && *ea == *eb;
}

std::string setting_value_sql(const std::string& name, const std::string& value) {
  bool fold = false;
  if (!list_parameter(name, &fold)) return quote_literal(value);
  auto elements = list_elements(value, fold);
  if (!elements) return quote_literal(value);  // PostgreSQL's to judge: one element
  std::string out;
  for (const auto& e : *elements) out += (out.empty() ? "" : ", ") + quote_literal(e);
  return out;
}

std::string address_of(const DbRole& role) { return "roles/" + role.name; }
std::string address_of(const DbSchema& schema) { return "schemas/" + schema.name; }
std::string address_of(const DbExtension& extension) { return "extensions/" + extension.name; }

std::string address_of(const DbGrant& grant) {
  std::string out = "grants/" + grant.role + "/" + grant.schema;
  switch (grant.on) {
    case DbGrant::On::Schema: break;
    case DbGrant::On::AllTables: out += "/tables"; break;
    case DbGrant::On::AllSequences: out += "/sequences"; break;
    case DbGrant::On::Table: out += "/tables/" + grant.object; break;
    case DbGrant::On::Sequence: out += "/sequences/" + grant.object; break;
  }
  return out;
}

bool same_target(const DbGrant& a, const DbGrant& b) {
  return a.role == b.role && a.schema == b.schema && a.on == b.on && a.object == b.object;
}

const DbGrant* find_grant(const std::vector<DbGrant>& grants, const DbGrant& like) {
  for (const auto& g : grants)
    if (same_target(g, like)) return &g;
  return nullptr;
}

}  // namespace dbform
