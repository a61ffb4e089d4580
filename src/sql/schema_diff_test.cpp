// The diff of a fork's schema against its source's: + - ~ lines, a new or dropped table in one line,
// and destructive marks on what loses data (a dropped table or column, a narrowed type).
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "sql/schema_diff.h"

using namespace dbform;
using Kind = SchemaObject::Kind;

namespace {

struct Builder {
  SchemaSnapshot s;
  Builder& table(const std::string& name, std::vector<std::pair<std::string, std::string>> columns) {
    SchemaObject t;
    t.kind = Kind::Table;
    t.name = name;
    t.definition = "table";
    s.objects.push_back(t);
    for (const auto& [column, type] : columns) {
      SchemaObject c;
      c.kind = Kind::Column;
      c.name = name + "." + column;
      c.table = name;
      c.column.type = type;
      c.column.position = static_cast<long long>(s.objects.size());  // in the order given, as attnum
      s.objects.push_back(c);
    }
    return *this;
  }
  Builder& object(Kind kind, const std::string& name, const std::string& definition, const std::string& table = "") {
    SchemaObject o;
    o.kind = kind;
    o.name = name;
    o.definition = definition;
    o.table = table;
    s.objects.push_back(o);
    return *this;
  }
  SchemaColumn& column(const std::string& name) {
    for (auto& o : s.objects)
      if (o.kind == Kind::Column && o.name == name) return o.column;
    throw std::runtime_error("no column " + name);
  }
};

std::vector<std::string> lines(const std::vector<SchemaChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.line() + (c.destructive ? "  [destructive: " + c.why + "]" : ""));
  return out;
}

}  // namespace

TEST_CASE("identical schemas have no change", "[sql]") {
  Builder a;
  a.table("public.orders", {{"id", "bigint"}}).object(Kind::Index, "public.orders_pkey", "CREATE UNIQUE INDEX ...", "public.orders");
  CHECK(diff_schemas(a.s, a.s).empty());
}

TEST_CASE("added, dropped and changed objects, the losses marked destructive", "[sql]") {
  Builder source, fork;
  source.object(Kind::Schema, "public", "")
      .table("public.orders", {{"id", "bigint"}, {"qty", "integer"}, {"note", "character varying(200)"}, {"old", "text"}})
      .table("public.legacy", {{"id", "integer"}})
      .object(Kind::Index, "public.legacy_idx", "CREATE INDEX legacy_idx ON public.legacy USING btree (id)", "public.legacy")
      .object(Kind::View, "public.v", "view AS SELECT 1");
  fork.object(Kind::Schema, "public", "")
      .table("public.orders", {{"id", "bigint"}, {"qty", "smallint"}, {"note", "text"}, {"placed", "timestamp with time zone"}})
      .table("public.customers", {{"id", "bigint"}, {"name", "text"}})
      .object(Kind::Index, "public.customers_name", "CREATE INDEX customers_name ON public.customers USING btree (name)",
              "public.customers")
      .object(Kind::View, "public.v", "view AS SELECT 2")
      .object(Kind::Extension, "pgcrypto", "1.3");
  fork.column("public.customers.id").not_null = true;
  fork.column("public.orders.id").default_value = "nextval('orders_id_seq'::regclass)";
  CHECK(lines(diff_schemas(source.s, fork.s)) == std::vector<std::string>{
            "+ extension pgcrypto (1.3)",
            "+ table public.customers (id bigint NOT NULL, name text)",
            "- table public.legacy  [destructive: the table is dropped with its rows]",
            "~ column public.orders.id: no default -> DEFAULT nextval('orders_id_seq'::regclass)",
            "~ column public.orders.note: character varying(200) -> text",
            "- column public.orders.old text  [destructive: the column is dropped with its values]",
            "+ column public.orders.placed timestamp with time zone",
            "~ column public.orders.qty: integer -> smallint  [destructive: the type narrows from integer to smallint: "
            "values may be cut or refused]",
            "+ index public.customers_name (CREATE INDEX customers_name ON public.customers USING btree (name))",
            "~ view public.v: view AS SELECT 1 -> view AS SELECT 2",
        });
}

TEST_CASE("a type narrows unless the new type is known to hold every value", "[sql]") {
  CHECK_FALSE(type_narrows("integer", "bigint"));
  CHECK(type_narrows("bigint", "integer"));
  CHECK_FALSE(type_narrows("character varying(20)", "character varying(40)"));
  CHECK(type_narrows("character varying(40)", "character varying(20)"));
  CHECK(type_narrows("text", "character varying(20)"));
  CHECK_FALSE(type_narrows("character varying(40)", "text"));
  CHECK_FALSE(type_narrows("numeric(10,2)", "numeric(12,2)"));
  CHECK(type_narrows("numeric(10,2)", "numeric(10,1)"));
  CHECK(type_narrows("numeric", "numeric(10,2)"));
  CHECK_FALSE(type_narrows("integer", "numeric(12,0)"));
  CHECK(type_narrows("bigint", "numeric(12,0)"));
  CHECK_FALSE(type_narrows("timestamp(3) without time zone", "timestamp with time zone"));
  CHECK(type_narrows("timestamp with time zone", "date"));
  CHECK_FALSE(type_narrows("json", "jsonb"));
  CHECK(type_narrows("integer[]", "integer"));
  CHECK_FALSE(type_narrows("uuid", "text"));
  CHECK(type_narrows("text", "uuid"));
  CHECK_FALSE(type_narrows("real", "double precision"));
  CHECK(type_narrows("double precision", "real"));
}

TEST_CASE("a new table's line lists its columns in their declared order, not by name", "[sql]") {
  Builder source, fork;
  fork.table("public.events", {{"id", "bigint"}, {"occurred_at", "timestamp with time zone"}, {"kind", "text"}});
  std::stable_sort(fork.s.objects.begin(), fork.s.objects.end(), [](const SchemaObject& a, const SchemaObject& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);  // as read_schema orders a snapshot
  });
  CHECK(lines(diff_schemas(source.s, fork.s)) ==
        std::vector<std::string>{"+ table public.events (id bigint, occurred_at timestamp with time zone, kind text)"});
}
