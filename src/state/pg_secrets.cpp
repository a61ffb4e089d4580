#include "state/pg_secrets.h"

#include "state/codec.h"

namespace dbform::pg_secrets {

namespace {

constexpr const char* kSecretFields[] = {"initial_password", "pending_password"};

// An empty password is written as "" (no password): nothing to keep apart.
bool holds_value(const nlohmann::json& field) {
  return !field.is_null() && !(field.is_string() && field.get<std::string>().empty());
}

std::string record_text(const nlohmann::json& record, const char* name) {
  auto it = record.find(name);
  return it != record.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::tuple<std::string, std::string, std::string> record_key(const nlohmann::json& record) {
  std::string id = record_text(record, "id");
  return {record_text(record, "kind"), record_text(record, "project_id"), id.empty() ? record_text(record, "address") : id};
}

std::vector<Row> take(nlohmann::json& records) {
  std::vector<Row> rows;
  if (!records.is_array()) return rows;
  for (auto& record : records) {
    if (!record.is_object()) continue;
    auto [kind, project, id] = record_key(record);
    for (const char* field : kSecretFields) {
      auto it = record.find(field);
      if (it == record.end() || !holds_value(*it) || is_secret_placeholder(*it)) continue;
      rows.push_back({{kind, project, id, field}, it->dump()});
      *it = secret_placeholder(kTable);
    }
  }
  return rows;
}

void restore(nlohmann::json& records, const Rows& rows) {
  if (!records.is_array()) return;
  for (auto& record : records) {
    if (!record.is_object()) continue;
    auto [kind, project, id] = record_key(record);
    for (const char* field : kSecretFields) {
      auto it = record.find(field);
      if (it == record.end() || !is_secret_placeholder(*it)) continue;
      auto row = rows.find({kind, project, id, field});
      if (row == rows.end()) {
        record.erase(field);
        continue;
      }
      // Stored by take() from the codec's own output; a row edited into other JSON is refused by the
      // codec when it reads the record, and one that is not JSON at all here, by its key.
      *it = nlohmann::json::parse(row->second, nullptr, false);
      if (it->is_discarded())
        throw StateError("the row of dbform_secrets for " + kind + " " + id + " (project " + project + "), field " +
                         field + ", is not JSON (edited by hand?). Put back the value it held, or delete the row "
                         "(dbform then knows no password for it: `dbform rotate-password ADDRESS` sets a new one)");
    }
  }
}

bool held_inline(const nlohmann::json& records) {
  if (!records.is_array()) return false;
  for (const auto& record : records)
    for (const char* field : kSecretFields)
      if (record.is_object() && record.contains(field) && holds_value(record[field]) &&
          !is_secret_placeholder(record[field]))
        return true;
  return false;
}

}  // namespace dbform::pg_secrets
