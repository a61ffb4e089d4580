#include "sql/schema_diff.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "util/text.h"

namespace dbform {

namespace {

using Kind = SchemaObject::Kind;

// A type as format_type() spells it: its base without modifiers ("character varying"), the
// modifiers' numbers ((10,2) -> 10, 2), and whether it is an array.
struct TypeName {
  std::string base;
  std::vector<long> mods;
  bool array = false;
};

TypeName parse_type(std::string text) {
  TypeName t;
  while (text.size() >= 2 && text.compare(text.size() - 2, 2, "[]") == 0) {
    t.array = true;
    text.resize(text.size() - 2);
  }
  const size_t open = text.find('('), close = text.find(')', open == std::string::npos ? 0 : open);
  if (open != std::string::npos && close != std::string::npos) {
    std::string numbers = text.substr(open + 1, close - open - 1);
    size_t at = 0;
    while (at < numbers.size()) {
      const size_t comma = numbers.find(',', at);
      t.mods.push_back(std::atol(numbers.substr(at, comma - at).c_str()));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    text = text.substr(0, open) + text.substr(close + 1);
  }
  t.base = text;
  return t;
}

int integer_digits(const std::string& base) {  // the decimal digits an integer type may need
  if (base == "smallint") return 5;
  if (base == "integer") return 10;
  if (base == "bigint") return 19;
  return 0;
}

bool is_character(const std::string& base) { return base == "character varying" || base == "character" || base == "text"; }
bool is_timestamp(const std::string& base) {
  return base == "timestamp without time zone" || base == "timestamp with time zone";
}

// `to` holds every value of `from` (both scalars of a known family); false when unknown.
bool widens(const TypeName& from, const TypeName& to) {
  const auto mod = [](const TypeName& t, size_t i, long otherwise) { return i < t.mods.size() ? t.mods[i] : otherwise; };
  const int from_digits = integer_digits(from.base), to_digits = integer_digits(to.base);
  if (from_digits && to_digits) return to_digits >= from_digits;
  if (from_digits && to.base == "numeric") return to.mods.empty() || mod(to, 0, 0) - mod(to, 1, 0) >= from_digits;
  if (from_digits && to.base == "double precision") return from_digits <= 10;  // 53 bits of mantissa
  if (from_digits && to.base == "real") return from_digits <= 5;
  if (from.base == "real" && to.base == "double precision") return true;
  if (from.base == "numeric" && to.base == "numeric") {
    if (to.mods.empty()) return true;
    if (from.mods.empty()) return false;
    return mod(to, 1, 0) >= mod(from, 1, 0) && mod(to, 0, 0) - mod(to, 1, 0) >= mod(from, 0, 0) - mod(from, 1, 0);
  }
  if (is_character(from.base) && is_character(to.base)) {
    if (to.base == "text" || (to.base == "character varying" && to.mods.empty())) return true;
    if (from.base == "text" || from.mods.empty()) return false;
    return to.base != "character" || from.base == "character" ? mod(to, 0, 0) >= mod(from, 0, 0) : false;
  }
  const bool same_precision_family = from.base == to.base || (is_timestamp(from.base) && is_timestamp(to.base));
  if (same_precision_family && (is_timestamp(from.base) || from.base.rfind("time", 0) == 0 || from.base == "interval"))
    return to.mods.empty() || mod(to, 0, 6) >= mod(from, 0, 6);
  if (from.base == "date" && is_timestamp(to.base)) return true;
  if (from.base == "json" && to.base == "jsonb") return true;
  if (from.base == to.base && (from.base == "bit varying")) return to.mods.empty() || mod(to, 0, 0) >= mod(from, 0, 0);
  return false;
}

}  // namespace

bool type_narrows(const std::string& from, const std::string& to) {
  if (from == to || to == "text") return false;  // every value has a text form
  const TypeName f = parse_type(from), t = parse_type(to);
  if (f.array != t.array) return true;
  return !widens(f, t);
}

std::string describe_column(const SchemaColumn& c) {
  std::string s = c.type;
  if (c.not_null) s += " NOT NULL";
  if (c.default_value) s += (c.default_value->rfind("GENERATED", 0) == 0 ? " " : " DEFAULT ") + *c.default_value;
  return s;
}

std::string SchemaChange::line() const {
  std::string s = std::string(1, op) + " " + kind_word(kind) + " " + name;
  if (op == '+' && !after.empty()) s += kind == Kind::Column ? " " + after : " (" + after + ")";
  if (op == '-' && !before.empty() && kind != Kind::Table) s += kind == Kind::Column ? " " + before : " (" + before + ")";
  if (op == '~') s += ": " + before + " -> " + after;
  return s;
}

namespace {

std::string description(const SchemaObject& o, const SchemaSnapshot& snapshot) {
  if (o.kind == Kind::Column) return describe_column(o.column);
  if (o.kind != Kind::Table) return o.definition;
  std::vector<const SchemaObject*> of_table;  // a table's line carries its columns, in their declared order
  for (const auto& c : snapshot.objects)
    if (c.kind == Kind::Column && c.table == o.name) of_table.push_back(&c);
  std::stable_sort(of_table.begin(), of_table.end(), [](const SchemaObject* a, const SchemaObject* b) {
    return a->column.position < b->column.position;
  });
  std::vector<std::string> columns;
  for (const SchemaObject* c : of_table) columns.push_back(c->name.substr(o.name.size() + 1) + " " + describe_column(c->column));
  return (o.definition == "table" ? "" : o.definition + ": ") + join(columns, ", ");
}

// What changed in a column, in the order a reviewer reads it: type, nullability, default.
void column_change(const SchemaObject& was, const SchemaObject& now, SchemaChange& change) {
  std::vector<std::string> before, after;
  if (was.column.type != now.column.type) {
    before.push_back(was.column.type);
    after.push_back(now.column.type);
    if (type_narrows(was.column.type, now.column.type)) {
      change.destructive = true;
      change.why = "the type narrows from " + was.column.type + " to " + now.column.type + ": values may be cut or refused";
    }
  }
  if (was.column.not_null != now.column.not_null) {
    before.push_back(was.column.not_null ? "NOT NULL" : "NULL");
    after.push_back(now.column.not_null ? "NOT NULL" : "NULL");
  }
  if (was.column.default_value != now.column.default_value) {
    before.push_back(was.column.default_value ? "DEFAULT " + *was.column.default_value : "no default");
    after.push_back(now.column.default_value ? "DEFAULT " + *now.column.default_value : "no default");
  }
  change.before = join(before, " ");
  change.after = join(after, " ");
}

}  // namespace

std::vector<SchemaChange> diff_schemas(const SchemaSnapshot& source, const SchemaSnapshot& fork) {
  using Key = std::pair<Kind, std::string>;
  std::map<Key, const SchemaObject*> was, now;
  for (const auto& o : source.objects) was[{o.kind, o.name}] = &o;
  for (const auto& o : fork.objects) now[{o.kind, o.name}] = &o;
  std::set<std::string> added_tables, dropped_tables;
  for (const auto& [key, o] : now)
    if (key.first == Kind::Table && !was.count(key)) added_tables.insert(key.second);
  for (const auto& [key, o] : was)
    if (key.first == Kind::Table && !now.count(key)) dropped_tables.insert(key.second);
  std::set<Key> keys;
  for (const auto& [key, o] : was) keys.insert(key);
  for (const auto& [key, o] : now) keys.insert(key);
  std::vector<SchemaChange> changes;
  for (const auto& key : keys) {  // std::set orders them by kind, then name
    const auto w = was.find(key), n = now.find(key);
    const SchemaObject* o = w != was.end() ? w->second : n->second;
    if (key.first == Kind::Column && (added_tables.count(o->table) || dropped_tables.count(o->table))) continue;
    if (w != was.end() && n == now.end() && !o->table.empty() && dropped_tables.count(o->table)) continue;
    SchemaChange c;
    c.kind = key.first;
    c.name = key.second;
    if (w == was.end()) {
      c.op = '+';
      c.after = description(*n->second, fork);
    } else if (n == now.end()) {
      c.op = '-';
      c.before = description(*w->second, source);
      if (c.kind == Kind::Table) {
        c.destructive = true;
        c.why = "the table is dropped with its rows";
      } else if (c.kind == Kind::Column) {
        c.destructive = true;
        c.why = "the column is dropped with its values";
      }
    } else if (c.kind == Kind::Column) {
      if (w->second->column.type == n->second->column.type && w->second->column.not_null == n->second->column.not_null &&
          w->second->column.default_value == n->second->column.default_value)
        continue;
      c.op = '~';
      column_change(*w->second, *n->second, c);
    } else {
      if (w->second->definition == n->second->definition) continue;
      c.op = '~';
      c.before = w->second->definition;
      c.after = n->second->definition;
    }
    changes.push_back(std::move(c));
  }
  return changes;
}

}  // namespace dbform
