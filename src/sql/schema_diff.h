#pragma once
// A fork's schema against its source's (`preview diff`): what was added (+), removed (-) and
// changed (~), the changes that lose data marked destructive (a dropped table or column, a column
// whose type narrows). Pure: the catalogs are read by catalog.h.
#include <string>
#include <vector>

#include "sql/catalog.h"

namespace dbform {

struct SchemaChange {
  char op = '~';  // '+', '-' or '~'
  SchemaObject::Kind kind = SchemaObject::Kind::Table;
  std::string name;
  std::string before;  // the source's description ("" for +)
  std::string after;   // the fork's ("" for -)
  bool destructive = false;
  std::string why;     // when destructive: what is lost

  // "+ table public.customers (id bigint NOT NULL, name text)", "~ column public.orders.qty: integer
  // -> smallint"; without the destructive mark, which each format renders its own way.
  std::string line() const;
};

// The changes from `source` to `fork`, in the snapshots' order (kind, then name). A table added or
// dropped carries its columns in its own line (and a dropped table's indexes and constraints go
// with it), so that a new table is one line, not one per column.
std::vector<SchemaChange> diff_schemas(const SchemaSnapshot& source, const SchemaSnapshot& fork);

// Whether a column of type `from` (format_type's spelling) changed to `to` may not hold every value
// it held: true unless `to` is known to widen `from` (a longer varchar, a larger integer, text...).
bool type_narrows(const std::string& from, const std::string& to);

// "integer NOT NULL DEFAULT 0"
std::string describe_column(const SchemaColumn& column);

}  // namespace dbform
