#pragma once
// A database's schema as the catalogs show it (what `preview diff` compares; docs/previews.md): schemas,
// extensions, tables with their columns (type, nullability, default), indexes, constraints and
// views of every schema but the system's and TimescaleDB's internal ones, without the migrations'
// ledger. Read in one read-only transaction bounded by a statement timeout: it never writes.
#include <optional>
#include <string>
#include <vector>

#include "sql/session.h"

namespace dbform {

struct SchemaColumn {
  std::string type;  // format_type(): "character varying(40)", "numeric(10,2)"
  bool not_null = false;
  std::optional<std::string> default_value;  // pg_get_expr(), or "GENERATED ... AS (...) STORED", an identity
  long long position = 0;                     // attnum: where CREATE TABLE (or ALTER TABLE ADD) put it
};

// One object; `name` is qualified (`public.orders`, a column `public.orders.qty`, an index
// `public.orders_pkey`, a constraint `public.orders.orders_qty_check`).
struct SchemaObject {
  enum class Kind { Schema, Extension, Table, Column, Index, Constraint, View };
  Kind kind = Kind::Table;
  std::string name;
  std::string definition;  // what is compared: a table's or view's kind, a version, a definition
  SchemaColumn column;     // columns only
  std::string table;       // a column's, index's or constraint's table (`public.orders`)
};

struct SchemaSnapshot {
  std::vector<SchemaObject> objects;  // ordered by kind, then name
};

// Reads the snapshot; throws Error naming the query's failure (a timeout included).
SchemaSnapshot read_schema(SqlSession& session);

// "table", "column"...
std::string kind_word(SchemaObject::Kind kind);

}  // namespace dbform
