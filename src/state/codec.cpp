#include "state/codec.h"

#include <algorithm>

#include <unordered_map>

#include "state/previews.h"
#include "util/clock.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform {

using nlohmann::json;

namespace {

json endpoint_json(const std::string& host, const std::optional<int>& port) {
  if (host.empty() && !port) return nullptr;
  if (port && (*port < 1 || *port > 65535))
    throw StateError("refusing to record port " + std::to_string(*port) + " of " + host + ": not from 1 to 65535");
  json j = json::object();
  if (!host.empty()) j["host"] = host;
  if (port) j["port"] = *port;
  return j;
}

// Field readers that name the record and field in their errors. Objects are moved out of the
// record's JSON, not copied.
class RecordReader {
 public:
  RecordReader(json& j, const std::string& source, size_t index) : j_(j), source_(source), index_(index) {}

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw StateError(source_ + ": resources[" + std::to_string(index_) + "]." + field + ": expected " + expected +
                     "; the state file is not valid and was left untouched");
  }
  std::string str(const char* field, bool required) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) {
      if (required) fail(field, "a string");
      return {};
    }
    if (!it->is_string()) fail(field, "a string");
    return it->get<std::string>();
  }
  bool boolean(const char* field) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return false;
    if (!it->is_boolean()) fail(field, "true or false");
    return it->get<bool>();
  }
  // An object, or null when absent.
  nlohmann::json object(const char* field) {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return nullptr;
    if (!it->is_object()) fail(field, "an object");
    return std::move(*it);
  }
  void endpoint(const char* field, std::string& host, std::optional<int>& port) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return;
    if (!it->is_object()) fail(field, "an object with host and port");
    if (auto h = it->find("host"); h != it->end()) {
      if (!h->is_string()) fail(std::string(field) + ".host", "a string");
      host = h->get<std::string>();
    }
    if (auto p = it->find("port"); p != it->end()) {
      if (!p->is_number_integer() || p->get<long long>() < 1 || p->get<long long>() > 65535)
        fail(std::string(field) + ".port", "a port number from 1 to 65535");
      port = static_cast<int>(p->get<long long>());
    }
  }

 private:
  json& j_;
  const std::string& source_;
  size_t index_;
};

void check_serial(long long serial) {
  if (serial < 0 || serial > kMaxSerial)
    throw StateError("the state's serial would pass " + std::to_string(kMaxSerial) +
                     ", the most it may reach; nothing was written. Push a copy as a new state (`dbform state "
                     "pull`, edit its serial, `dbform state push --force`)");
}

json stamp_json(const RefreshStamp& stamp) {
  json j = {{"at", stamp.at}, {"by", stamp.by}, {"serial", stamp.serial}};
  if (stamp.unchanged_since) j["unchanged_since"] = *stamp.unchanged_since;
  if (!stamp.catalogs.empty()) j["catalogs"] = stamp.catalogs;
  return j;
}

// The stamp only tells how current the state is (and spares a saved plan that a write of the stamp
// alone made stale), so one that does not read as written is left out, never a reason to refuse
// the state.
std::optional<RefreshStamp> stamp_from_json(const json* j) {
  if (!j || !j->is_object()) return std::nullopt;
  auto text = [&](const char* field) { return j->contains(field) && (*j)[field].is_string(); };
  auto serial = [&](const char* field) {
    return j->contains(field) && (*j)[field].is_number_integer() && (*j)[field].get<long long>() >= 0 &&
           (*j)[field].get<long long>() <= kMaxSerial;
  };
  if (!text("at") || !text("by") || !serial("serial") || !parse_utc((*j)["at"].get<std::string>()))
    return std::nullopt;
  RefreshStamp stamp{(*j)["at"].get<std::string>(), (*j)["by"].get<std::string>(), (*j)["serial"].get<long long>(),
                     std::nullopt};
  if (serial("unchanged_since")) stamp.unchanged_since = (*j)["unchanged_since"].get<long long>();
  if (const auto c = j->find("catalogs"); c != j->end() && c->is_object())
    for (auto it = c->begin(); it != c->end(); ++it)
      if (it->is_string() && parse_utc(it->get<std::string>())) stamp.catalogs[it.key()] = it->get<std::string>();
  return stamp;
}

const json* member(const json& j, const char* field) {
  auto it = j.find(field);
  return it == j.end() ? nullptr : &*it;
}

}  // namespace

namespace {

// A secret as a document holds it: in clear, sealed now (`cipher` seals), or as it was read sealed.
// Writing a clear password into a state whose passwords are sealed (`sealed_with`), without the key,
// is refused: such a state never gets a clear one.
json secret_json(const Secret& s, const ResourceRecord& r, const char* field, const StateCipher* cipher,
                 const std::string& sealed_with) {
  if (s.empty()) return "";
  if (s.is_unreadable()) {
    if (cipher)
      throw StateError("refusing to write " + r.address + "'s " + field + ": this role may not read the table " +
                       s.unreadable_in() + " that holds it, so it cannot carry it. Run this with a role granted "
                       "SELECT on " + s.unreadable_in() + "; nothing was written");
    return secret_placeholder(s.unreadable_in());
  }
  if (s.is_sealed()) {
    if (cipher && s.bound_to() != secret_binding(r))
      throw StateError("refusing to write " + r.address + "'s " + field + ": it is sealed for " + kind_name(r.kind) +
                       " id " + s.bound_to().substr(s.bound_to().rfind('\n') + 1) + ", and the record now holds id " +
                       r.id + ", a binding only the key can renew. Set DBFORM_STATE_PASSPHRASE or "
                       "DBFORM_STATE_KEY_FILE to the state's key; nothing was written");
    return s.envelope();
  }
  if (cipher && cipher->seals()) return cipher->seal_secret(s.text(), secret_binding(r));
  if (cipher && !sealed_with.empty())
    throw StateError("refusing to write " + r.address + "'s " + field + " in clear: the state's passwords are sealed " +
                     "(key id " + sealed_with + ") and no key is set. Set DBFORM_STATE_PASSPHRASE or "
                     "DBFORM_STATE_KEY_FILE to the state's key; nothing was written");
  return s.text();
}

json record_json(const ResourceRecord& r, const StateCipher* cipher, const std::string& sealed_with);

}  // namespace

json secret_placeholder(const std::string& table) { return {{"format", "dbform-secret"}, {"stored_in", table}}; }

bool is_secret_placeholder(const json& j) {
  return j.is_object() && j.value("format", json()) == "dbform-secret" && j.contains("stored_in") &&
         j["stored_in"].is_string() && !j.contains("encryption");
}

json record_to_json(const ResourceRecord& r) { return record_json(r, nullptr, ""); }

namespace {

json record_json(const ResourceRecord& r, const StateCipher* cipher, const std::string& sealed_with) {
  json j = {{"address", r.address},
            {"project_id", r.project_id},
            {"kind", kind_name(r.kind)},
            {"name", r.name}};
  if (!r.parent.empty()) j["parent"] = r.parent;
  j.update(json{{"settings", r.settings},
            {"id", r.id},
            {"create_pending", r.create_pending},
            {"status", r.status}});
  j["endpoint"] = endpoint_json(r.endpoint_host, r.endpoint_port);
  j["pooler_endpoint"] = endpoint_json(r.pooler_host, r.pooler_port);
  j["initial_password"] = secret_json(r.initial_password, r, "initial_password", cipher, sealed_with);
  if (!r.pending_password.empty())
    j["pending_password"] = secret_json(r.pending_password, r, "pending_password", cipher, sealed_with);
  if (!r.observed.is_null()) j["observed"] = r.observed;
  if (!r.pending_call.is_null()) j["pending_call"] = r.pending_call;
  if (r.deleted_outside) j["deleted_outside"] = true;
  if (r.deletion_protection) j["deletion_protection"] = true;
  j["created_at"] = r.created_at;
  j["updated_at"] = r.updated_at;
  j["last_response"] = r.last_response;
  return j;
}

// A password field: a string in clear, or a sealed value, opened when `cipher` has a key.
Secret read_secret(json& j, const char* field, const ResourceRecord& r, const StateCipher& cipher,
                   const std::string& source, size_t index) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return {};
  const std::string where = source + ": resources[" + std::to_string(index) + "] (" + r.address + ")." + field;
  if (it->is_string()) {
    remember_secret(it->get<std::string>());
    return Secret(it->get<std::string>());
  }
  if (is_secret_placeholder(*it)) return Secret::unreadable((*it)["stored_in"].get<std::string>());
  if (!StateCipher::is_sealed(*it) || it->value("format", json()) != "dbform-secret" ||
      !it->value("ciphertext", json()).is_string())
    throw StateError(where + ": expected a password (a string, or a sealed value with \"format\": \"dbform-secret\"); "
                     "the state file is not valid and was left untouched");
  const std::string binding = secret_binding(r);
  if (!cipher.has_key()) return Secret::sealed(std::move(*it), binding);
  std::string clear = cipher.open_secret(*it, binding, where);
  remember_secret(clear);
  return Secret(std::move(clear));
}

}  // namespace

ResourceRecord record_from_json(json&& j, const std::string& source, size_t index, const StateCipher& cipher) {
  RecordReader in(j, source, index);
  if (!j.is_object()) in.fail("", "an object");
  ResourceRecord r;
  r.address = in.str("address", true);
  r.project_id = in.str("project_id", true);
  const auto kind = kind_named(in.str("kind", true));
  if (!kind) in.fail("kind", "\"service\", \"vpc\", \"replica_set\" or \"peering\"");
  r.kind = *kind;
  r.name = in.str("name", true);
  r.parent = in.str("parent", false);
  if (parent_kind(r.kind).has_value() == r.parent.empty())
    in.fail("parent", parent_kind(r.kind) ? std::string("the name of the ") + kind_noun(*parent_kind(r.kind)) + " it is in"
                                          : std::string("absent: a ") + kind_noun(r.kind) + " is in no other resource");
  if (json settings = in.object("settings"); !settings.is_null()) r.settings = std::move(settings);
  if (is_preview_record(r)) {  // PROJECT/previews/NAME/services/SERVICE (state/previews.h)
    if (const std::string problem = preview_record_problem(r); !problem.empty()) in.fail("settings.preview", problem);
  } else if (const std::string expected = resource_address(r.project_id, r.kind, r.name, r.parent); r.address != expected) {
    in.fail("address", "\"" + expected + "\" (from project_id, kind, parent and name)");
  }
  r.observed = in.object("observed");
  r.pending_call = in.object("pending_call");
  if (!r.pending_call.is_null() && !r.pending_call.value("call", nlohmann::json()).is_string())
    in.fail("pending_call.call", "the name of a call, like \"resize\"");
  r.deleted_outside = in.boolean("deleted_outside");
  r.deletion_protection = in.boolean("deletion_protection");
  r.id = in.str("id", false);
  r.create_pending = in.boolean("create_pending");
  r.status = in.str("status", false);
  in.endpoint("endpoint", r.endpoint_host, r.endpoint_port);
  in.endpoint("pooler_endpoint", r.pooler_host, r.pooler_port);
  r.initial_password = read_secret(j, "initial_password", r, cipher, source, index);
  r.pending_password = read_secret(j, "pending_password", r, cipher, source, index);
  r.created_at = in.str("created_at", false);
  if (is_preview_record(r) && !parse_utc(r.created_at))  // a preview's age and order come from it
    in.fail("created_at", std::string(kUtcTimeExpected) + " for a preview's fork");
  r.updated_at = in.str("updated_at", false);
  if (auto l = j.find("last_response"); l != j.end()) r.last_response = std::move(*l);
  return r;
}

namespace {
State state_of_document(json&& doc, const std::string& source, const StateCipher& cipher);
}  // namespace

State parse_state(const std::string& text, const std::string& source, const StateCipher& cipher,
                  std::string* sealed_by) {
  std::string problem;
  json doc = parse_json_within(text, JsonLimits{kMaxStateBytes, kMaxStateDepth}, problem);
  if (doc.is_discarded())
    throw StateError(source + ": " + problem + "; the state file was left untouched. Restore it from " + source +
                     ".backup or fix it by hand");
  if (StateCipher::is_sealed(doc)) {
    // Sealed whole, as dbform wrote it before each password was sealed on its own: read with its
    // key, and written in the new form at the next write.
    if (doc.value("format", json()) != "dbform-state")
      throw StateError(source + ": not a dbform state (expected \"format\": \"dbform-state\"); the state file was "
                       "left untouched");
    const std::string key_id = StateCipher::key_id_of(doc);
    const std::string inner = cipher.open(doc, source);
    doc = parse_json_within(inner, JsonLimits{kMaxStateBytes, kMaxStateDepth}, problem);
    if (doc.is_discarded() || StateCipher::is_sealed(doc))
      throw StateError(source + ": what its envelope holds is not a state document; the state file was left "
                       "untouched. Restore it from " + source + ".backup");
    State state = state_of_document(std::move(doc), source, cipher);
    state.secrets_key_id = key_id;
    state.sealed_whole = true;
    if (sealed_by) *sealed_by = key_id;
    return state;
  }
  State state = state_of_document(std::move(doc), source, cipher);
  if (sealed_by) *sealed_by = state.secrets_key_id;
  return state;
}

namespace {

State state_of_document(json&& doc, const std::string& source, const StateCipher& cipher) {
  auto fail = [&](const std::string& what) -> StateError {
    return StateError(source + ": " + what + "; the state file was left untouched");
  };
  if (!doc.is_object() || doc.value("format", json()) != "dbform-state")
    throw fail("not a dbform state (expected \"format\": \"dbform-state\")");
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) throw fail("\"version\" must be an integer");
  if (version->get<long long>() > kStateVersion)
    throw fail("state version " + std::to_string(version->get<long long>()) +
               " was written by a newer dbform (this one reads version " + std::to_string(kStateVersion) +
               "); upgrade dbform");
  if (version->get<long long>() < 1) throw fail("\"version\" must be 1 or 2");
  State state;
  if (auto k = doc.find("secrets_key_id"); k != doc.end() && !k->is_null()) {
    if (!k->is_string() || k->get<std::string>().empty())
      throw fail("\"secrets_key_id\" must be the key id its passwords are sealed with");
    state.secrets_key_id = k->get<std::string>();
  }
  auto lineage = doc.find("lineage");
  if (lineage == doc.end() || !lineage->is_string() || lineage->get<std::string>().empty())
    throw fail("\"lineage\" must be a non-empty string");
  state.lineage = lineage->get<std::string>();
  auto serial = doc.find("serial");
  if (serial == doc.end() || !serial->is_number_integer() || serial->get<long long>() < 0 ||
      serial->get<long long>() > kMaxSerial)
    throw fail("\"serial\" must be an integer from 0 to " + std::to_string(kMaxSerial));
  state.serial = serial->get<long long>();
  auto resources = doc.find("resources");
  if (resources == doc.end() || !resources->is_array()) throw fail("\"resources\" must be an array");
  std::unordered_map<std::string, size_t> seen;  // address -> index
  state.resources.reserve(resources->size());
  for (size_t i = 0; i < resources->size(); ++i) {
    ResourceRecord r = record_from_json(std::move((*resources)[i]), source, i, cipher);
    (*resources)[i] = nullptr;  // what was not moved into the record goes now: the DOM shrinks as records grow
    if (auto [at, first] = seen.emplace(r.address, i); !first)
      throw fail("resources[" + std::to_string(at->second) + "] and resources[" + std::to_string(i) +
                 "] are both " + r.address + " (a hand edit?). Remove the wrong one from the file, or restore " +
                 source + ".backup");
    state.resources.push_back(std::move(r));
  }
  state.refreshed = stamp_from_json(member(doc, "refreshed"));
  return state;
}

}  // namespace

State checked_unique(State state, const std::string& source) {
  std::unordered_map<std::string, const ResourceRecord*> by_id;  // kind/project/id -> the first record
  std::vector<std::string> clashes;
  for (const auto& r : state.resources) {
    if (r.id.empty()) continue;
    auto [at, first] = by_id.emplace(std::string(kind_name(r.kind)) + "/" + r.project_id + "/" + r.id, &r);
    if (!first)
      clashes.push_back(at->second->address + " and " + r.address + " both record " + kind_name(r.kind) + " id " +
                        r.id);
  }
  if (clashes.empty()) return state;
  throw DuplicateRecords(
      source + ": " + join(clashes, "; ") +
          ". One database must not have two records (a hand edit?): acting on them could delete or change the "
          "wrong one, so dbform uses this state only to repair it. Find which address the resource really has "
          "(`dbform state show ADDRESS`), remove the other record with `dbform state rm ADDRESS` (no API call), "
          "then run the command again",
      std::move(state));
}

std::string written_key_id(const State& state, const StateCipher& cipher) {
  return cipher.seals() ? cipher.sealing_key_id() : state.secrets_key_id;
}

std::string serialize_state(const State& state, const StateCipher& cipher) {
  check_serial(state.serial);
  const std::string key_id = written_key_id(state, cipher);
  json resources = json::array();
  for (const auto& r : state.resources) resources.push_back(record_json(r, &cipher, key_id));
  json doc = {{"format", "dbform-state"},
              {"version", key_id.empty() ? kClearStateVersion : kStateVersion},
              {"lineage", state.lineage},
              {"serial", state.serial}};
  if (!key_id.empty()) doc["secrets_key_id"] = key_id;
  if (state.refreshed) doc["refreshed"] = stamp_json(*state.refreshed);
  doc["resources"] = std::move(resources);
  return dump_json(doc, 2) + "\n";
}

std::string with_serial(const std::string& document, long long serial) {
  check_serial(serial);
  // Indented by two, a raw newline and two spaces before a quote can only begin a top-level key:
  // strings hold their newlines escaped, and keys nested deeper are indented further.
  constexpr std::string_view kKey = "\n  \"serial\": ";
  const size_t at = document.rfind(kKey);
  if (at == std::string::npos) throw Error("internal error: a state document without its serial");
  const size_t from = at + kKey.size(), to = document.find_first_not_of("0123456789", from);
  std::string out = document;  // one copy of a document of megabytes, not three
  return out.replace(from, to - from, std::to_string(serial));
}

std::string journal_entry(const State& state, const std::vector<std::string>& changed, const StateCipher& cipher) {
  check_serial(state.serial + 1);
  const std::string key_id = written_key_id(state, cipher);
  json upsert = json::array(), remove = json::array();
  for (const auto& address : changed) {
    if (const ResourceRecord* r = state.find(address)) upsert.push_back(record_json(*r, &cipher, key_id));
    else remove.push_back(address);
  }
  json entry = {{"lineage", state.lineage}, {"serial", state.serial + 1}, {"upsert", std::move(upsert)},
                {"remove", std::move(remove)}};
  // Carried by every entry, so that the stamp and the records it speaks of are written together.
  if (state.refreshed) entry["refreshed"] = stamp_json(*state.refreshed);
  if (!key_id.empty()) entry["secrets_key_id"] = key_id;
  return dump_json(entry);
}

std::string journal_entry_key_id(const json& entry) {
  if (StateCipher::is_sealed(entry)) return StateCipher::key_id_of(entry);
  if (!entry.is_object()) return "";
  auto k = entry.find("secrets_key_id");
  return k != entry.end() && k->is_string() ? k->get<std::string>() : "";
}

// {"lineage", "serial", "upsert": [records], "remove": [addresses]}. Entries the state already holds
// (a crash between a compaction and the journal's removal) are skipped.
void apply_journal_entry(State& state, const std::string& line, const std::string& where, const StateCipher& cipher) {
  auto fail = [&](const std::string& what) {
    return StateError(where + ": " + what + "; the state was left untouched. Restore it from a backup (a state " +
                      "file's .backup, or the output of `dbform state pull`)");
  };
  // The parser's message is left out: it would quote the line, which may hold a password.
  std::string problem;
  json j = parse_json_within(line, JsonLimits{kMaxStateBytes, kMaxStateDepth}, problem);
  if (StateCipher::is_sealed(j)) {
    if (j.value("format", json()) != "dbform-journal-entry") throw fail("not a journal entry");
    j = parse_json_within(cipher.open(j, where), JsonLimits{kMaxStateBytes, kMaxStateDepth}, problem);
    if (StateCipher::is_sealed(j)) throw fail("an envelope inside an envelope");
  }
  if (j.is_discarded()) throw fail("not a journal entry (" + problem + ")");
  if (!j.is_object() || !j.contains("serial") || !j["serial"].is_number_integer() || !j.contains("lineage") ||
      !j["lineage"].is_string())
    throw fail("not a journal entry");
  if (j["lineage"] != state.lineage) throw fail("the journal belongs to another state (lineage " +
                                                j["lineage"].get<std::string>() + ")");
  const long long serial = j["serial"].get<long long>();
  if (serial <= state.serial) return;
  if (serial > kMaxSerial) throw fail("serial " + std::to_string(serial) + " is past " + std::to_string(kMaxSerial));
  if (serial != state.serial + 1)
    throw fail("serial " + std::to_string(serial) + " does not follow " + std::to_string(state.serial));
  size_t index = 0;
  json upserts = j.value("upsert", json::array());
  for (auto& record : upserts) state.upsert(record_from_json(std::move(record), where, index++, cipher));
  for (const auto& address : j.value("remove", json::array())) {
    if (!address.is_string()) throw fail("a removed address is not a string");
    state.remove(address.get<std::string>());
  }
  if (const json* stamp = member(j, "refreshed")) state.refreshed = stamp_from_json(stamp);
  state.serial = serial;
}

bool journal_outgrew(size_t journal_bytes, size_t document_bytes, size_t floor) {
  return journal_bytes > std::max(document_bytes, floor);
}

}  // namespace dbform
