#include "manifest/objects_reader.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <type_traits>

#include "util/text.h"

namespace dbform {

namespace {

const MappingSpec kRole{"a role", {"name", "login", "connection_limit", "member_of", "settings", "deletion_protection"},
                        {"name"}};
const MappingSpec kSchema{"a schema", {"name", "owner"}, {"name"}};
const MappingSpec kExtension{"an extension", {"name"}, {"name"}};
const MappingSpec kGrant{"a grant", {"role", "schema", "tables", "sequences", "privileges"},
                         {"role", "schema", "privileges"}};

// PostgreSQL keeps 63 bytes of a name (NAMEDATALEN): a longer one would be cut, and two names
// that differ past it would be one object.
constexpr size_t kMaxObjectName = 63;

class ObjectsReader {
 public:
  explicit ObjectsReader(ValueReader& values) : values_(values) {}

  ServiceObjects read(const Fields& service);

 private:
  std::optional<std::string> object_name(const Entry& e, const char* what, bool reserved_prefix);
  std::optional<DesiredRole> role(const Entry& e);
  std::optional<DesiredSchema> schema(const Entry& e);
  std::optional<DesiredExtension> extension(const Entry& e);
  void grants(const Entry& e, std::vector<DesiredGrant>& out);
  std::vector<std::string> privileges(const Entry& e, GrantTarget target);
  void check_together(const ServiceObjects& objects);

  // A name one declaration gives of another (a member_of, a schema's owner, a grant's role or
  // schema), checked once all four lists are read.
  struct Reference {
    Location where;
    std::string path;
    std::string name;
  };

  ValueReader& values_;
  std::vector<Reference> member_of_, owners_, grant_roles_, grant_schemas_;
};

std::optional<std::string> ObjectsReader::object_name(const Entry& e, const char* what, bool reserved_prefix) {
  auto name = values_.name(e);
  if (!name) return std::nullopt;
  if (name->size() > kMaxObjectName) {
    values_.error(e.where, e.path,
                  std::string("a ") + what + "'s name is at most 63 characters in PostgreSQL (this one has " +
                      std::to_string(name->size()) + ")",
                  "shorten it: PostgreSQL would cut it, and names alike in their first 63 characters would be one");
    return std::nullopt;
  }
  if (reserved_prefix && lower(*name).rfind("pg_", 0) == 0) {
    values_.error(e.where, e.path, std::string("names starting with `pg_` are PostgreSQL's own: no ") + what +
                                       " of a database may be named so",
                  "choose another name");
    return std::nullopt;
  }
  return name;
}

std::optional<DesiredRole> ObjectsReader::role(const Entry& e) {
  auto fields = read_mapping(values_, e, kRole);
  if (!fields) return std::nullopt;
  DesiredRole r;
  r.location = e.where;
  r.path = e.path;
  std::optional<std::string> name;
  if (const Entry* f = fields->find("name")) {
    name = object_name(*f, "role", true);
    if (name && is_builtin_role(*name)) {
      values_.error(f->where, f->path, "`" + *name + "` is the service's own role: it can be named in `member_of` or "
                                       "as an owner, not declared",
                    "remove this role, or give yours another name");
      name.reset();
    }
  }
  if (const Entry* f = fields->find("login")) r.login = values_.boolean(*f).value_or(false);
  if (const Entry* f = fields->find("connection_limit"))
    r.connection_limit = values_.whole_number(*f, -1, "a whole number of connections, or -1 for no limit");
  if (const Entry* f = fields->find("deletion_protection")) r.deletion_protection = values_.boolean(*f).value_or(false);
  read_list(values_, *fields, "member_of", "role names", [&](const Entry& item) {
    if (auto m = values_.name(item)) {
      if (std::find(r.member_of.begin(), r.member_of.end(), *m) != r.member_of.end()) {
        values_.error(item.where, item.path, "`" + *m + "` is listed twice in member_of", "list each role once");
      } else {
        r.member_of.push_back(*m);
        member_of_.push_back({item.where, item.path, *m});
      }
    }
  });
  if (const Entry* f = fields->find("settings")) {
    if (!f->value->is_map()) {
      values_.error(f->where, f->path, "expected a mapping of settings like `statement_timeout: 30s`, found " +
                                           values_.describe(*f->value));
    } else {
      for (const auto& [key, value] : f->value->pairs) {
        const bool named = key->is_scalar() && !key->scalar.empty() &&
                           std::all_of(key->scalar.begin(), key->scalar.end(), [](char c) {
                             return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
                           }) && !std::isdigit(static_cast<unsigned char>(key->scalar[0]));
        Entry setting = values_.entry(*key, *value, f->path + "." + (key->is_scalar() ? key->scalar : "?"));
        if (!named) {
          values_.error(values_.location(*key), f->path,
                        "a setting's name is a PostgreSQL parameter: letters, digits, '_' and '.', like "
                        "`statement_timeout` or `app.tenant`");
          continue;
        }
        if (r.settings.count(key->scalar)) {
          values_.error(setting.where, setting.path, "`" + key->scalar + "` is set twice", "keep one");
          continue;
        }
        if (auto v = values_.setting(setting)) r.settings[key->scalar] = *v;
      }
    }
  }
  if (!name) return std::nullopt;
  r.name = std::move(*name);
  return r;
}

std::optional<DesiredSchema> ObjectsReader::schema(const Entry& e) {
  auto fields = read_mapping(values_, e, kSchema);
  if (!fields) return std::nullopt;
  DesiredSchema s;
  s.location = e.where;
  s.path = e.path;
  std::optional<std::string> name;
  if (const Entry* f = fields->find("name")) name = object_name(*f, "schema", true);
  if (const Entry* f = fields->find("owner")) {
    if (auto owner = values_.name(*f)) {
      s.owner = *owner;
      owners_.push_back({f->where, f->path, *owner});
    }
  }
  if (!name) return std::nullopt;
  if (*name == "public") {
    values_.error(e.where, e.path, "`public` is in every database already: it is not declared",
                  "grant on it without declaring it");
    return std::nullopt;
  }
  s.name = std::move(*name);
  return s;
}

std::optional<DesiredExtension> ObjectsReader::extension(const Entry& e) {
  auto fields = read_mapping(values_, e, kExtension);
  if (!fields) return std::nullopt;
  DesiredExtension x;
  x.location = e.where;
  x.path = e.path;
  const Entry* f = fields->find("name");
  std::optional<std::string> name = f ? object_name(*f, "extension", false) : std::nullopt;
  if (!name) return std::nullopt;
  x.name = std::move(*name);
  return x;
}

std::vector<std::string> ObjectsReader::privileges(const Entry& e, GrantTarget target) {
  std::vector<std::string> out;
  const auto& known = known_privileges(target);
  const std::string word = grant_target_word(target);
  if (!e.value->is_sequence() || e.value->items.empty()) {
    values_.error(e.where, e.path, "expected a list of privileges like [" + join(known, ", ") + "], found " +
                                       values_.describe(*e.value));
    return out;
  }
  size_t index = 0;
  for (const YamlNode* node : e.value->items) {
    Entry item = values_.item(*node, e.path + "[" + std::to_string(index++) + "]");
    auto text = values_.text(item, "a privilege's name");
    if (!text) continue;
    auto privilege = canonical_privilege(target, *text);
    if (!privilege) {
      values_.error(item.where, item.path, "a " + word + " has no privilege `" + *text + "`",
                    "a " + word + "'s are " + join(known, ", ") + " (or ALL)");
      continue;
    }
    if (std::find(out.begin(), out.end(), *privilege) != out.end()) {
      values_.error(item.where, item.path, "`" + *privilege + "` is listed twice", "list each privilege once");
      continue;
    }
    out.push_back(*privilege);
  }
  if (out.size() > 1 && std::find(out.begin(), out.end(), "ALL") != out.end())
    values_.error(e.where, e.path, "ALL is every privilege of a " + word + ": it goes alone",
                  "write [ALL], or the privileges without ALL");
  // In the target's own order, so that a plan and a record compare lists, not their order.
  std::vector<std::string> ordered;
  if (std::find(out.begin(), out.end(), "ALL") != out.end()) ordered.push_back("ALL");
  for (const auto& p : known)
    if (std::find(out.begin(), out.end(), p) != out.end()) ordered.push_back(p);
  return ordered;
}

void ObjectsReader::grants(const Entry& e, std::vector<DesiredGrant>& out) {
  auto fields = read_mapping(values_, e, kGrant);
  if (!fields) return;
  DesiredGrant g;
  g.location = e.where;
  g.path = e.path;
  std::optional<std::string> role, schema;
  if (const Entry* f = fields->find("role")) role = values_.name(*f);
  if (const Entry* f = fields->find("schema")) schema = values_.name(*f);
  const Entry* tables = fields->find("tables");
  const Entry* sequences = fields->find("sequences");
  if (tables && sequences) {
    values_.error(sequences->where, sequences->path, "a grant is on the schema, its tables or its sequences: not both "
                                                     "tables and sequences",
                  "write two grants, one for the tables and one for the sequences");
    return;
  }
  const Entry* objects = tables ? tables : sequences;
  g.target = tables ? GrantTarget::Table : sequences ? GrantTarget::Sequence : GrantTarget::Schema;
  std::vector<std::string> names;
  if (objects) {
    if (objects->value->is_scalar() && objects->value->scalar == "all") {
      g.all = true;
    } else if (objects->value->is_sequence() && !objects->value->items.empty()) {
      size_t index = 0;
      for (const YamlNode* node : objects->value->items)
        if (auto n = values_.name(values_.item(*node, objects->path + "[" + std::to_string(index++) + "]")))
          names.push_back(*n);
    } else {
      values_.error(objects->where, objects->path,
                    std::string("expected `all` or a list of ") + (tables ? "table" : "sequence") + " names, found " +
                        values_.describe(*objects->value));
      return;
    }
  }
  if (const Entry* f = fields->find("privileges")) g.privileges = privileges(*f, g.target);
  if (!role || !schema || g.privileges.empty()) return;
  g.role = *role;
  g.schema = *schema;
  const Entry* role_entry = fields->find("role");
  const Entry* schema_entry = fields->find("schema");
  grant_roles_.push_back({role_entry->where, role_entry->path, *role});
  grant_schemas_.push_back({schema_entry->where, schema_entry->path, *schema});
  if (!objects || g.all) {
    out.push_back(std::move(g));
    return;
  }
  for (const auto& name : names) {
    DesiredGrant one = g;
    one.object = name;
    out.push_back(std::move(one));
  }
}

ServiceObjects ObjectsReader::read(const Fields& service) {
  ServiceObjects out;
  read_list(values_, service, "roles", "roles", [&](const Entry& item) {
    if (auto r = role(item)) out.roles.push_back(std::move(*r));
  });
  read_list(values_, service, "schemas", "schemas", [&](const Entry& item) {
    if (auto x = schema(item)) out.schemas.push_back(std::move(*x));
  });
  read_list(values_, service, "extensions", "extensions", [&](const Entry& item) {
    if (auto x = extension(item)) out.extensions.push_back(std::move(*x));
  });
  read_list(values_, service, "grants", "grants", [&](const Entry& item) { grants(item, out.grants); });
  check_together(out);
  return out;
}

// Each name once per kind, and every name given of a role or a schema declared (or the service's own).
void ObjectsReader::check_together(const ServiceObjects& objects) {
  auto once = [&](const auto& list, const char* what) {
    std::map<std::string, const Location*> seen;
    for (const auto& item : list) {
      const std::string name = [&] {
        if constexpr (std::is_same_v<std::decay_t<decltype(item)>, DesiredGrant>) return item.name();
        else return item.name;
      }();
      auto [first, fresh] = seen.emplace(name, &item.location);
      if (!fresh)
        values_.error(item.location, item.path,
                      std::string(what) + " `" + name + "` is declared twice in this service (first at " +
                          first->second->str() + ")",
                      std::string("keep one: a ") + what + " is one object in the database");
    }
  };
  once(objects.roles, "role");
  once(objects.schemas, "schema");
  once(objects.extensions, "extension");
  once(objects.grants, "grant");

  std::set<std::string> roles, schemas = {"public"};
  for (const auto& r : objects.roles) roles.insert(r.name);
  for (const auto& s : objects.schemas) schemas.insert(s.name);
  auto declared_roles = [&] {
    std::vector<std::string> names(roles.begin(), roles.end());
    return names.empty() ? std::string("none is declared") : "declared: " + join(names, ", ");
  };
  for (const auto& m : member_of_)
    if (!roles.count(m.name) && !is_builtin_role(m.name))
      values_.error(m.where, m.path, "member_of names `" + m.name + "`, which is not a role of this service (" +
                                         declared_roles() + ")",
                    "declare it under `roles:`, or name tsdbadmin or one of PostgreSQL's predefined roles "
                    "(pg_read_all_data, pg_monitor, ...)");
  for (const auto& r : objects.roles)
    if (std::find(r.member_of.begin(), r.member_of.end(), r.name) != r.member_of.end())
      values_.error(r.location, r.path + ".member_of", "role `" + r.name + "` cannot be a member of itself");
  for (const auto& o : owners_)
    if (!roles.count(o.name) && o.name != "tsdbadmin")
      values_.error(o.where, o.path, "the schema's owner `" + o.name + "` is not a role of this service (" +
                                         declared_roles() + ")",
                    "declare it under `roles:`, or leave `owner` out for tsdbadmin");
  for (const auto& g : grant_roles_)
    if (!roles.count(g.name))
      values_.error(g.where, g.path, "the grant is to `" + g.name + "`, which is not a role of this service (" +
                                         declared_roles() + ")",
                    "declare the role under `roles:`: dbform grants only to roles it manages");
  for (const auto& g : grant_schemas_)
    if (!schemas.count(g.name))
      values_.error(g.where, g.path, "the grant is on schema `" + g.name + "`, which is not declared in this service",
                    "declare it under `schemas:` (public needs no declaration)");
}

}  // namespace

std::string DesiredGrant::name() const {
  std::string out = role + "/" + schema;
  if (target == GrantTarget::Schema) return out;
  out += target == GrantTarget::Table ? "/tables" : "/sequences";
  return all ? out : out + "/" + object;
}

bool is_builtin_role(const std::string& name) {
  // tsdbadmin owns the service's database; PostgreSQL's predefined roles (pg_monitor,
  // pg_read_all_data, ...) all start with pg_, which CREATE ROLE refuses for any other.
  return name == "tsdbadmin" || name == "postgres" || lower(name).rfind("pg_", 0) == 0;
}

ServiceObjects read_service_objects(ValueReader& values, const Fields& service) {
  return ObjectsReader(values).read(service);
}

}  // namespace dbform
