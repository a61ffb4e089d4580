#pragma once
// The PostgreSQL store keeps every password apart from the documents, in the table dbform_secrets,
// so that a role may read the state (plan, list, show) without the passwords. These helpers move
// the passwords of a document's or journal entry's records out to rows and back.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace dbform::pg_secrets {

inline constexpr const char* kTable = "dbform_secrets";

// A row's key without the workspace: the record's kind, project and id (its address while it has
// none yet), and the field. Not the address: `state mv` and renames keep a record's passwords, as
// they keep its sealed values (bound to kind, project and id).
using Key = std::tuple<std::string, std::string, std::string, std::string>;
struct Row {
  Key key;
  std::string value;  // the field as the codec wrote it (JSON text: a clear string or a sealed value)
};
using Rows = std::map<Key, std::string>;

// Every password of `records` (a JSON array of records) moved out to rows, a placeholder left in
// its place.
std::vector<Row> take(nlohmann::json& records);
// The placeholders of `records` given their rows' values. Without `rows` (the role may not read
// the table) they stay, and read as passwords out of reach; a placeholder without a row (its
// password cleared by a later write of the same snapshot) is dropped.
void restore(nlohmann::json& records, const Rows& rows);
// Whether `records` hold a password in the document itself (written before the table existed).
bool held_inline(const nlohmann::json& records);
// The record part of a key (kind, project, id or address) of one record.
std::tuple<std::string, std::string, std::string> record_key(const nlohmann::json& record);

}  // namespace dbform::pg_secrets
