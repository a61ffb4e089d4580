// A preview that carries the pull request's schema (docs/previews.md), against `dbform sim
// --postgres`: the migrations applied on each fork with their ledger, a second `up` that applies
// only new files without an API call, a changed file, a failing file (the fork kept, exit 1, file
// and line named), a syntax error that touches nothing, the schema diff with its destructive marks,
// the source only ever read, and a markdown comment without secrets. Fails on the main it started
// from: there is no `migrations:` field and no `preview diff`.
#include "postgres_sim.h"
#include "previews_common.h"
#include "util/crypto.h"

using namespace e2e;

namespace {

const std::string kBlock = "    previews:\n      services: [orders]\n      strategy: NOW\n      ttl: 72h\n      max: 3\n"
                           "      migrations: db/migrations\n";

// The source's catalogs (every column of every relation of `public`, with its type) and rows: what
// must not change when a preview is made, migrated and compared.
std::string fingerprint(const std::string& conninfo) {
  SqlResult r = sql(conninfo,
                    "SELECT md5(string_agg(x, '|' ORDER BY x)) FROM ("
                    "SELECT c.relkind::text || ':' || c.relname || ':' || coalesce(a.attname, '') || ':' || "
                    "coalesce(format_type(a.atttypid, a.atttypmod), '') AS x FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_attribute a ON a.attrelid = c.oid "
                    "AND a.attnum > 0 AND NOT a.attisdropped WHERE n.nspname = 'public' "
                    "UNION ALL SELECT 'orders:' || string_agg(o::text, ';' ORDER BY o::text) FROM orders o) s");
  INFO(r.error);
  REQUIRE(r.ok);
  return r.value;
}

struct Preview {
  Sandbox& sb;
  std::string source;  // the source's connection string
  // The fork's connection string (its own password), from `dbform output`.
  std::string fork() { return connection_string(sb, preview_address("pr-1", "orders")); }
};

Preview prepared(Sandbox& sb) {
  sb.write("dbform.yaml", manifest({}, {service_yaml("orders")}) + kBlock);
  RunResult applied = sb.apply({"--wait-connectable"});  // the source takes the test's SQL at once
  INFO(applied.describe());
  REQUIRE(applied.exit_code == 0);
  Preview p{sb, connection_string(sb, service_address("orders"))};
  REQUIRE(sql(p.source, "CREATE TABLE orders (id bigint PRIMARY KEY, qty integer NOT NULL, note text);"
                        "CREATE TABLE legacy (id int); INSERT INTO orders VALUES (1, 5, 'first'), (2, 7, NULL)")
              .ok);
  return p;
}

std::string ledger_of(const std::string& conninfo) {
  return sql(conninfo, "SELECT string_agg(name || '=' || sha256, ',' ORDER BY name) FROM dbform_migrations").value;
}

std::string hashed(const std::string& name, const std::string& text) { return name + "=" + dbform::hex(dbform::sha256(text)); }

}  // namespace

TEST_CASE("postgres: preview up applies the migrations to the fork with a ledger - a second up applies only new files "
          "without an API call - a changed file stops everything",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  Preview p = prepared(sb);
  const std::string first = "-- customers\nCREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL);\n"
                            "ALTER TABLE orders ADD COLUMN customer_id bigint REFERENCES customers (id);\n";
  const std::string second = "INSERT INTO customers VALUES (1, 'ada; lovelace');\nUPDATE orders SET customer_id = 1;\n";
  sb.write("db/migrations/0001_customers.sql", first);
  sb.write("db/migrations/0002_seed.sql", second);
  sb.write("db/migrations/README.md", "not a migration");

  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);
  CHECK_THAT(up.out, Catch::Contains("orders-pr-1: applied 0001_customers.sql, 0002_seed.sql (2 in all)"));
  CHECK_THAT(up.err, Catch::Contains("orders-pr-1: applying db/migrations/0001_customers.sql"));
  // The fork has the source's rows and the pull request's schema; its ledger names both files.
  const std::string fork = p.fork();
  CHECK(sql(fork, "SELECT string_agg(id || ':' || qty || ':' || customer_id, ',' ORDER BY id) FROM orders").value == "1:5:1,2:7:1");
  CHECK(sql(fork, "SELECT name FROM customers").value == "ada; lovelace");
  CHECK(ledger_of(fork) == hashed("0001_customers.sql", first) + "," + hashed("0002_seed.sql", second));
  CHECK(sql(fork, "SELECT count(*) FROM dbform_migrations WHERE applied_at > now() - interval '10 minutes'").value == "2");
  // The source has none of it.
  CHECK_FALSE(sql(p.source, "SELECT 1 FROM customers").ok);
  CHECK_FALSE(sql(p.source, "SELECT 1 FROM dbform_migrations").ok);

  // A newer commit: one more file. No API call; only the new file runs.
  const std::string third = "CREATE INDEX customers_name ON customers (name);\n";
  sb.write("db/migrations/0003_index.sql", third);
  const json before = sim.calls();
  RunResult again = preview(sb, {"up", "pr-1", "--format", "json"});
  INFO(again.describe());
  REQUIRE(again.exit_code == 0);
  CHECK(calls_since(before, sim.calls()) == json::object());
  const json report = json::parse(again.out);
  CHECK(report["migrations"]["forks"][0]["applied"] == json::array({"0003_index.sql"}));
  CHECK(report["migrations"]["forks"][0]["applied_before"] == 2);
  CHECK(ledger_of(fork) == hashed("0001_customers.sql", first) + "," + hashed("0002_seed.sql", second) + "," +
                               hashed("0003_index.sql", third));

  // A file changed after it was applied: named, and nothing applied in that run (not even a new file).
  sb.write("db/migrations/0002_seed.sql", second + "-- edited\n");
  sb.write("db/migrations/0004_more.sql", "CREATE TABLE more (v int);\n");
  RunResult changed = preview(sb, {"up", "pr-1"});
  INFO(changed.describe());
  CHECK(changed.exit_code == 1);
  CHECK_THAT(changed.err, Catch::Contains("db/migrations/0002_seed.sql changed after it was applied"));
  CHECK_THAT(changed.err, Catch::Contains("no migration was applied"));
  CHECK_FALSE(sql(fork, "SELECT 1 FROM more").ok);
  CHECK(sql(fork, "SELECT count(*) FROM dbform_migrations").value == "3");
}

TEST_CASE("postgres: a failing migration keeps the fork and names file and line - a syntax error touches nothing",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  Preview p = prepared(sb);
  sb.write("db/migrations/0001_ok.sql", "CREATE TABLE ok (v int);\n");
  sb.write("db/migrations/0002_bad.sql",
           "CREATE TABLE half (v int);\n-- the table below was never made\nINSERT INTO half\n  SELECT v FROM nope;\n");
  sb.write("db/migrations/0003_after.sql", "CREATE TABLE after_bad (v int);\n");
  RunResult up = preview(sb, {"up", "pr-1", "--format", "markdown"});
  INFO(up.describe());
  CHECK(up.exit_code == 1);
  CHECK_THAT(up.err, Catch::Contains("orders-pr-1: migrations failed: db/migrations/0002_bad.sql:3:1: relation \"nope\" "
                                     "does not exist (at 4:17; SQLSTATE 42P01)"));
  CHECK_THAT(up.out, Catch::Contains("migrations failed") && Catch::Contains("0002_bad.sql:3:1"));
  // The fork is kept, READY, with what ran before the failing file; the failing file left nothing.
  json rec = find_resource(sb.state(), preview_address("pr-1", "orders"));
  REQUIRE(rec.is_object());
  CHECK(rec["status"] == "READY");
  const std::string fork = p.fork();
  CHECK(sql(fork, "SELECT count(*) FROM ok").ok);
  CHECK_FALSE(sql(fork, "SELECT 1 FROM half").ok);
  CHECK_FALSE(sql(fork, "SELECT 1 FROM after_bad").ok);
  CHECK(sql(fork, "SELECT string_agg(name, ',') FROM dbform_migrations").value == "0001_ok.sql");

  // A syntax error is found by PostgreSQL's parser before anything: no call, no statement on the fork.
  sb.write("db/migrations/0002_bad.sql", "CREATE TABLE half (v int);\nINSERT INTO half\n  SELEC v FROM ok;\n");
  const json before = sim.calls();
  RunResult syntax = preview(sb, {"up", "pr-2"});
  INFO(syntax.describe());
  CHECK(syntax.exit_code == 1);
  CHECK_THAT(syntax.err, Catch::Contains("db/migrations/0002_bad.sql:3:3: error: syntax error: syntax error at or near \"SELEC\""));
  CHECK(calls_since(before, sim.calls()) == json::object());
  CHECK_FALSE(find_resource(sb.state(), preview_address("pr-2", "orders")).is_object());
  RunResult fixed_not = preview(sb, {"up", "pr-1"});
  CHECK(fixed_not.exit_code == 1);
  CHECK(sql(fork, "SELECT count(*) FROM dbform_migrations").value == "1");

  // Fixed: the next up applies the rest; down removes the kept fork as usual.
  sb.write("db/migrations/0002_bad.sql", "CREATE TABLE half (v int);\nINSERT INTO half SELECT v FROM ok;\n");
  RunResult fixed = preview(sb, {"up", "pr-1"});
  INFO(fixed.describe());
  CHECK(fixed.exit_code == 0);
  CHECK(sql(fork, "SELECT count(*) FROM dbform_migrations").value == "3");
  CHECK(preview(sb, {"down", "pr-1"}).exit_code == 0);
}

TEST_CASE("postgres: preview diff shows the fork's schema against its source's with destructive marks - the source is "
          "only read - the markdown comment holds no secret",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  Preview p = prepared(sb);
  sb.write("db/migrations/0001_change.sql",
           "DROP TABLE legacy;\nALTER TABLE orders DROP COLUMN note;\nALTER TABLE orders ALTER COLUMN qty TYPE smallint;\n"
           "ALTER TABLE orders ALTER COLUMN id TYPE numeric(30,0);\n"
           "CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL DEFAULT 'x');\n"
           "CREATE INDEX orders_qty ON orders (qty);\n");
  const std::string source_before = fingerprint(p.source);

  RunResult up = preview(sb, {"up", "pr-1", "--format", "markdown"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);
  CHECK_THAT(up.out, Catch::Contains("#### Migrations") && Catch::Contains("applied `0001_change.sql`"));
  CHECK_THAT(up.out, Catch::Contains("#### Schema changes") && Catch::Contains("- table public.legacy  # DESTRUCTIVE"));
  CHECK_THAT(up.out, Catch::Contains("**destructive**: `public.orders.qty`: `the type narrows from integer to smallint"));
  CHECK_THAT(up.out, Catch::Contains("**3 destructive change(s)**"));
  // Never a password or a connection string that holds one.
  json state = sb.state();
  for (const auto& address : std::vector<std::string>{service_address("orders"), preview_address("pr-1", "orders")}) {
    const std::string password = find_resource(state, address)["initial_password"];
    REQUIRE(password.size() > 8);
    CHECK_THAT(up.out, !Catch::Contains(password));
  }
  CHECK_THAT(up.out, !Catch::Contains("postgres://") && !Catch::Contains("password="));

  RunResult diff = sb.run({"preview", "diff", "pr-1"});
  INFO(diff.describe());
  CHECK(diff.exit_code == 0);
  CHECK_THAT(diff.out, Catch::Contains("orders-pr-1 against orders:\n"));
  CHECK_THAT(diff.out, Catch::Contains("  + table public.customers (id bigint NOT NULL, name text NOT NULL DEFAULT 'x'::text)\n"));
  CHECK_THAT(diff.out, Catch::Contains("  - table public.legacy  (destructive: the table is dropped with its rows)\n"));
  CHECK_THAT(diff.out, Catch::Contains("  - column public.orders.note text  (destructive: the column is dropped with its values)\n"));
  CHECK_THAT(diff.out, Catch::Contains("  ~ column public.orders.qty: integer -> smallint  (destructive:"));
  CHECK_THAT(diff.out, Catch::Contains("  ~ column public.orders.id: bigint -> numeric(30,0)\n"));
  CHECK_THAT(diff.out, Catch::Contains("  + index public.orders_qty (CREATE INDEX orders_qty ON public.orders USING btree (qty))\n"));
  CHECK_THAT(diff.out, Catch::Contains("  + constraint public.customers.customers_pkey (PRIMARY KEY (id))\n"));
  CHECK_THAT(diff.out, !Catch::Contains("dbform_migrations"));
  CHECK_THAT(diff.out, Catch::Contains("3 destructive."));
  CHECK(sb.run({"preview", "diff", "pr-1", "--detailed-exitcode"}).exit_code == 2);
  RunResult as_json = sb.run({"preview", "diff", "pr-1", "--format", "json"});
  REQUIRE(as_json.exit_code == 0);
  const json d = json::parse(as_json.out);
  CHECK(d["differs"] == true);
  CHECK(d["destructive"] == 3);

  // The source: its catalogs and rows as they were, and nothing of the preview in it.
  CHECK(fingerprint(p.source) == source_before);
  CHECK_FALSE(sql(p.source, "SELECT 1 FROM dbform_migrations").ok);

  // A fork whose schema is its source's: no change, exit 0 even with --detailed-exitcode.
  sb.write("db/migrations/0001_change.sql", "SELECT 1;\n");
  REQUIRE(preview(sb, {"up", "pr-2"}).exit_code == 0);
  RunResult same = sb.run({"preview", "diff", "pr-2", "--detailed-exitcode"});
  INFO(same.describe());
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.out, Catch::Contains("orders-pr-2 against orders: no schema change"));
}

TEST_CASE("postgres: migrations wait for a fork reported READY before it accepts connections", "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb, {"--ready-before-connectable", "2s"});
  Preview p = prepared(sb);
  sb.write("db/migrations/0001_a.sql", "CREATE TABLE a (v int);\n");
  RunResult up = preview(sb, {"up", "pr-1"});
  INFO(up.describe());
  REQUIRE(up.exit_code == 0);
  CHECK_THAT(up.out, Catch::Contains("orders-pr-1: applied 0001_a.sql (1 in all)"));
  CHECK(sql(p.fork(), "SELECT count(*) FROM dbform_migrations").value == "1");
}

namespace {

// The statements running pg_sleep on the server at `conninfo`, but the asking one: "0" when none.
std::string sleeping_statements(const std::string& conninfo) {
  return sql(conninfo, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND "
                       "query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid()")
      .value;
}

}  // namespace

// A migration that never ends must not hold a preview (and its lock) forever. Fails on the main it was written on: there is no
// --migration-timeout, and a signal is looked at only between files.
TEST_CASE("postgres: a migration statement past --migration-timeout is cancelled on the server - the failure names the "
          "file and the timeout - also when the file sets its own statement_timeout",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  Preview p = prepared(sb);
  sb.write("db/migrations/0001_ok.sql", "CREATE TABLE ok (v int);\n");
  sb.write("db/migrations/0002_sleep.sql", "CREATE TABLE half (v int);\nSELECT pg_sleep(3600);\n");
  RunResult up = preview(sb, {"up", "pr-1", "--migration-timeout", "2s"});
  INFO(up.describe());
  CHECK(up.exit_code == 1);
  CHECK_THAT(up.err, Catch::Contains("orders-pr-1: migrations failed: db/migrations/0002_sleep.sql:2:1: the statement ran "
                                     "longer than the migration timeout (2s) and was cancelled"));
  CHECK_THAT(up.err, Catch::Contains("--migration-timeout"));
  const std::string fork = p.fork();
  CHECK(sleeping_statements(fork) == "0");
  CHECK(sql(fork, "SELECT string_agg(name, ',') FROM dbform_migrations").value == "0001_ok.sql");
  CHECK_FALSE(sql(fork, "SELECT 1 FROM half").ok);  // its file was rolled back

  // A file that lifts the server's timeout for itself is cancelled by dbform all the same.
  sb.write("db/migrations/0002_sleep.sql", "SET statement_timeout = 0;\nSELECT pg_sleep(3600);\n");
  RunResult own = preview(sb, {"up", "pr-1", "--migration-timeout", "2s"});
  INFO(own.describe());
  CHECK(own.exit_code == 1);
  CHECK_THAT(own.err, Catch::Contains("db/migrations/0002_sleep.sql:2:1: the statement ran longer than the migration "
                                      "timeout (2s) and was cancelled"));
  CHECK(own.elapsed < std::chrono::seconds(20));
  CHECK(sleeping_statements(fork) == "0");

  // The flag's value is checked before anything is read or called.
  const json before = sim.calls();
  RunResult zero = preview(sb, {"up", "pr-1", "--migration-timeout", "0s"});
  CHECK(zero.exit_code == 1);
  CHECK_THAT(zero.err, Catch::Contains("--migration-timeout: `0s` ends every statement at once"));
  CHECK(calls_since(before, sim.calls()) == json::object());
}

TEST_CASE("postgres: SIGTERM during a migration cancels its statement on the server - exit 130 - the state's lock is "
          "released and the file applies on the next up",
          "[e2e][postgres]") {
  Sandbox sb;
  PostgresSim sim(sb);
  Preview p = prepared(sb);
  sb.write("db/migrations/0001_sleep.sql", "CREATE TABLE half (v int);\nSELECT pg_sleep(3600);\n");
  auto run = sb.start({"preview", "up", "pr-1", "--poll-interval", "100ms"}, {}, std::chrono::seconds(90));
  // The fork's statement seen running on its server before the signal: no guess at how long it takes.
  std::string fork;
  const bool running = eventually(
      [&] {
        if (fork.empty()) {
          RunResult out = sb.run({"output", preview_address("pr-1", "orders") + ".connection_string"});
          if (out.exit_code != 0 || out.out.find("postgres://") != 0) return false;
          fork = out.out.substr(0, out.out.find('\n'));
        }
        return sleeping_statements(fork) == "1";
      },
      std::chrono::seconds(60));
  INFO(run->stderr_so_far());
  REQUIRE(running);
  const auto signalled = std::chrono::steady_clock::now();
  run->signal(SIGTERM);
  RunResult stopped = run->wait();
  INFO(stopped.describe());
  CHECK(stopped.exit_code == 130);
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(10));
  CHECK_THAT(stopped.err, Catch::Contains("stopped by a signal: the statement of db/migrations/0001_sleep.sql running on "
                                          "orders-pr-1 was cancelled on the server"));
  // Nothing of it runs on in the fork, and its file left nothing.
  CHECK(sleeping_statements(fork) == "0");
  CHECK_FALSE(sql(fork, "SELECT 1 FROM half").ok);
  CHECK_FALSE(sql(fork, "SELECT 1 FROM dbform_migrations").ok);

  // The lock is free (the next run takes it at once, --lock-timeout 0s), and the file, never
  // applied, may be fixed and applied.
  sb.write("db/migrations/0001_sleep.sql", "CREATE TABLE half (v int);\n");
  RunResult again = preview(sb, {"up", "pr-1"});
  INFO(again.describe());
  CHECK(again.exit_code == 0);
  CHECK(sql(fork, "SELECT string_agg(name, ',') FROM dbform_migrations").value == "0001_sleep.sql");
}
