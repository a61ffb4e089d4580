#include "util/runner_secrets.h"

#include <libpq-fe.h>

#include <mutex>

#include "util/atomic_file.h"

namespace dbform {

namespace {

std::mutex noted_mu;
std::vector<std::string>& noted_locations() {
  static std::vector<std::string> noted;
  return noted;
}

// The password a libpq connection string or URL holds ("" for a file path, or no password).
std::string password_in(const std::string& where) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(where.c_str(), &error);
  if (error) PQfreemem(error);
  if (!options) return "";
  std::string password;
  for (const PQconninfoOption* o = options; o->keyword; ++o)
    if (std::string(o->keyword) == "password" && o->val) password = o->val;
  PQconninfoFree(options);
  return password;
}

// The fifth field of each line of a libpq password file (host:port:db:user:password, `\` escaping
// `:` and `\`); comments and short lines hold none.
std::vector<std::string> passwords_in_passfile(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields(1);
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && fields.size() < 5) fields.back() += line[++i];
      else if (line[i] == ':' && fields.size() < 5) fields.emplace_back();
      else fields.back() += line[i];
    }
    if (fields.size() == 5) {
      std::string& password = fields.back();
      while (!password.empty() && password.back() == '\r') password.pop_back();
      if (!password.empty()) out.push_back(password);
    }
  }
  return out;
}

}  // namespace

void note_state_location(const std::string& where) {
  std::lock_guard<std::mutex> lock(noted_mu);
  noted_locations().push_back(where);
}

std::vector<std::pair<std::string, std::string>> runner_secrets(const EnvLookup& env) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const std::string& value, const std::string& from) {
    if (!value.empty()) out.emplace_back(value, from);
  };
  if (auto state = env("DBFORM_STATE")) add(password_in(*state), "the password of DBFORM_STATE");
  {
    std::lock_guard<std::mutex> lock(noted_mu);
    for (const auto& where : noted_locations()) add(password_in(where), "the password of --state");
  }
  if (auto pg = env("PGPASSWORD")) add(*pg, "PGPASSWORD");
  std::string passfile;
  if (auto named = env("PGPASSFILE")) passfile = *named;
  else if (auto home = env("HOME")) passfile = *home + "/.pgpass";
  if (!passfile.empty()) {
    try {
      if (auto text = read_file_if_exists(passfile, Links::Follow, size_t{1} << 20))
        for (const auto& password : passwords_in_passfile(*text)) add(password, "a password of " + passfile);
    } catch (const Error&) {
      // A password file that cannot be read holds nothing libpq would use either.
    }
  }
  return out;
}

}  // namespace dbform
