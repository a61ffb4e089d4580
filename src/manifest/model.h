#pragma once
// The desired model: what the manifests declare, validated and normalised. Every field keeps the
// location it was declared at, so later stages (the differ's duplicate and conflict messages) can
// point back at the manifest.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/database_objects.h"
#include "util/diagnostics.h"

namespace dbform {

// Read replica sets live in a service and peerings in a VPC (their parent); roles, schemas,
// extensions and grants live inside a service's database.
enum class ResourceKind { Service, Vpc, ReplicaSet, Peering, Role, Schema, Extension, Grant };

// What a rule of the policies (src/policy) may compare a field with, and how its value is checked
// when loaded.
enum class PolicyFieldType {
  Text,      // names, ids, regions: any scalar, compared as text
  Number,    // counts and a read replica set's sizes
  Size,      // a service's cpu_millis / memory_gbs: a number or "shared"
  Bool,
  Tag,       // environment_tag: DEV or PROD
  Strategy,  // a preview's fork strategy: LAST_SNAPSHOT or NOW
  TextList,  // addons: compared as a set
};

struct PolicyField {
  const char* name;
  PolicyFieldType type;
};

// Whose password a record's connections use: none (it takes no connections), its own (made by its
// create, whose answer carries it), or its parent's (a read replica set shares its service's).
enum class PasswordOwner { None, Own, Parent };

// A setting that names a resource of another kind of the project (a service's `vpc`): kept when the
// named one is renamed, and managed even when undeclared (no `vpc` means "in none").
struct KindReference {
  const char* field;
  ResourceKind kind;
};

// A kind as the manifest, the state, the policies and messages know it: one row each, in its own
// file (kind_vpc.cpp, kind_service.cpp, ...) and a line of kind_forms() (model.cpp), saying only
// what differs from the defaults here; how its calls are made is its plan/kinds.h row.
struct KindForm {
  ResourceKind kind;
  const char* name;    // as states and plans store it: "service", "vpc", "replica_set", "peering"
  const char* plural;  // address segment: "services", "vpcs", "replicas", "peerings"
  const char* noun;    // as messages name it: "service", "VPC", "read replica set", "VPC peering"
  std::optional<ResourceKind> parent;  // the kind it lives in; none for a project's own resources
  // Its list's key, in its project or in its parent's declaration ("read_replicas"), and the key of
  // its name ("" for a peering, which its peer VPC's id names).
  const char* list;
  const char* name_key = "name";
  std::vector<const char*> fields;  // its settings, in the order a generated manifest writes them
  // The status a record of it has once it is made and ready ("" for a kind without statuses: made
  // once it has an id), and the one that counts as settled besides (a stopped service).
  const char* ready_status = "";
  const char* settled_status = "";
  // The fields a rule of the policies may name for it, in the order docs/policies.md lists them
  // (kept in agreement with schemas/policy.schema.json).
  std::vector<PolicyField> policy_fields;
  PasswordOwner password = PasswordOwner::None;
  bool connectable = false;  // it has an endpoint that psql, `connect` and `output` reach
  bool has_status = false;   // the API shows a status of it (a VPC has none)
  std::optional<KindReference> refers;
  const char* delete_note = "";  // after "will be DELETED" in a plan: what goes with it
  // Its list in the manifest's JSON Schema (schemas/manifest.schema.json) and its declaration's
  // mapping there ($defs/NAME), which comes from the rows its file reads it with (kind_reader.h).
  const char* list_description = "";
  nlohmann::ordered_json (*schema)() = nullptr;
  // It lives inside its parent service's database: made by SQL as the service's admin, in one
  // transaction with the rest of that service's objects, never by an API call (sql/objects.h).
  bool in_database = false;
};

const KindForm& kind_form(ResourceKind k);
// Every kind: VPCs, services, then those that live in another (the order of a generated manifest).
const std::vector<KindForm>& kind_forms();
// Each kind's row, in its own file.
KindForm vpc_form();
KindForm service_form();
KindForm replica_set_form();
KindForm peering_form();
KindForm role_form();
KindForm schema_form();
KindForm extension_form();
KindForm grant_form();

const char* kind_name(ResourceKind k);
std::optional<ResourceKind> kind_named(std::string_view name);
const char* kind_plural(ResourceKind k);
const char* kind_noun(ResourceKind k);
std::optional<ResourceKind> parent_kind(ResourceKind k);
// Whether a setting of another kind names resources of kind `k` (KindForm::refers: a VPC).
bool is_referred_to(ResourceKind k);

// A declaration's exemption from one rule of the policies (`policy_waivers`): honoured only for a
// rule marked `waivable`, until it expires; the policies' evaluator (src/policy) decides.
struct PolicyWaiver {
  std::string rule;    // the rule's id
  std::string reason;
  std::string expires;  // as written: 2027-01-31 (through that day, UTC) or 2027-01-31T12:00:00Z
  std::chrono::time_point<std::chrono::system_clock, std::chrono::seconds> expires_at;  // when it ends
  Location location;
  std::string path;  // "projects[0].services[1].policy_waivers[0]"
};
// A rule's id: 1-64 of lowercase letters, digits and '-', starting with a letter or digit.
bool is_policy_rule_id(std::string_view s);

// A peering of a VPC with a peer VPC (another cloud account's); it has no name and is known by
// its peer VPC's id.
struct DesiredPeering {
  std::string peer_account_id;
  std::string peer_region_code;
  std::string peer_vpc_id;
  bool deletion_protection = false;
  std::optional<std::string> import_id;  // adopt this existing peering instead of creating one
  std::vector<PolicyWaiver> policy_waivers;
  Location location;
};

struct DesiredVpc {
  std::string name;
  std::string cidr;
  std::string region_code;
  // Recorded in the state at every apply: a protected orphan is never deleted, even with --prune.
  bool deletion_protection = false;
  // The name it is recorded under: its record moves to this name, and one rename call is made.
  std::optional<std::string> renamed_from;
  // Not recorded yet: the existing resource of this id is read and recorded by apply instead of a
  // create (docs/using.md, "Bringing existing databases in"); ignored once recorded.
  std::optional<std::string> import_id;
  std::vector<PolicyWaiver> policy_waivers;
  std::vector<DesiredPeering> peerings;
  Location location;
  std::string path;  // "projects[0].vpcs[1]"
};

// A read replica set of a service: its sizes are positive whole numbers (no "shared").
struct DesiredReplicaSet {
  std::string name;
  long long nodes = 1;
  long long cpu_millis = 0;
  long long memory_gbs = 0;
  std::optional<bool> connection_pooler;
  std::optional<std::string> environment_tag;  // "DEV" or "PROD"
  bool deletion_protection = false;
  std::optional<std::string> import_id;  // as for VPCs
  std::vector<PolicyWaiver> policy_waivers;
  Location location;
};

// A service created as a fork of another service of its project (create-time only).
struct DesiredFork {
  std::string from;      // the source service's name
  std::string strategy;  // LAST_SNAPSHOT, NOW or PITR
  std::string target_time;  // PITR: RFC 3339 UTC; "" otherwise
  Location location;
  std::string path;  // its field path, "projects[0].services[2].fork", for messages
};

struct DesiredService {
  std::string name;
  std::vector<std::string> addons;           // as declared, each "time-series" or "ai"
  std::optional<std::string> cpu_millis;     // canonical: "1000" or "shared"
  std::optional<std::string> memory_gbs;     // canonical: "4", "0.5" or "shared"
  std::optional<std::string> environment_tag;  // "DEV" or "PROD"
  std::optional<std::string> region_code;
  std::optional<long long> replica_count;
  std::optional<long long> sync_replica_count;  // synchronous HA replicas, at most replica_count
  std::optional<bool> paused;                   // true: stopped (PAUSED); false: running
  // The project's VPC it is attached to. Unlike the other optional fields, no `vpc` is managed
  // too: it means "in no VPC" (docs/manifest.md, "What is managed").
  std::optional<std::string> vpc;
  Location vpc_location;
  std::string vpc_path;  // "projects[0].services[2].vpc"
  std::optional<bool> connection_pooler;
  bool deletion_protection = false;  // as for VPCs
  std::optional<std::string> renamed_from;  // as for VPCs
  std::optional<std::string> import_id;     // as for VPCs
  std::vector<PolicyWaiver> policy_waivers;
  std::optional<DesiredFork> fork;
  std::vector<DesiredReplicaSet> read_replicas;
  // Inside its database (manifest/database_objects.h): each grant is one (role, object), a list of
  // tables read as one grant each.
  std::vector<DesiredRole> roles;
  std::vector<DesiredSchema> schemas;
  std::vector<DesiredExtension> extensions;
  std::vector<DesiredGrant> grants;
  Location location;
  std::string path;  // "projects[0].services[2]"
};

// An address listed under a project's `removed:` (Terraform's `removed` block with destroy =
// false): its record is forgotten by apply, and the resource stays in the API untouched.
struct RemovedAddress {
  std::string address;  // the full address, PROJECT/services/NAME...
  Location location;
};

// A project's `previews:` block (docs/previews.md): what `dbform preview up NAME` forks for a pull
// request. Previews belong to the block, not to the declarations: no plan acts on them.
struct DesiredPreviews {
  std::vector<std::string> services;  // declared services of the project, each forked once per preview
  std::vector<Location> service_locations;  // of each item of `services`
  std::string strategy = "LAST_SNAPSHOT";   // LAST_SNAPSHOT or NOW
  std::string ttl;                          // as written ("72h"); a preview older than this is swept
  long long ttl_ms = 0;
  long long max = 1;  // at most this many previews of the project at once
  std::optional<std::string> cpu_millis;  // each fork's size; unset: its source's
  std::optional<std::string> memory_gbs;
  // `migrations: DIR`: the directory of SQL files applied to each fork (docs/previews.md), as written
  // joined to its manifest file's directory (an absolute DIR stays as it is); unset: none.
  std::optional<std::string> migrations;
  Location migrations_location;
  Location location;
  std::string path;  // "projects[0].previews"
};

struct DesiredProject {
  std::string id;
  std::optional<std::string> api_key_env;
  std::vector<DesiredVpc> vpcs;
  std::vector<DesiredService> services;
  Location location;
  std::vector<RemovedAddress> removed;
  // apply waits after READY until its services accept connections (docs/pipelines.md); unset: false.
  std::optional<bool> wait_connectable;
  std::optional<DesiredPreviews> previews;
};

// One declaration of any kind, as the walk of a project's declarations shows it: a view into the
// manifest, valid while it is. What reads the declarations of every kind (the differ, the imports,
// the generated manifest's check, addresses, completion, the namesake listing, the policies'
// waivers) takes them from the walk, so that only the walk knows the tree.
struct Declaration {
  ResourceKind kind;
  const std::string& parent;  // the name of what it lives in; empty for a project's own resources
  const std::string& name;    // a peering: its peer VPC's id
  bool deletion_protection;
  const std::optional<std::string>& import_id;
  const std::optional<std::string>& renamed_from;  // never set for a kind that is not renamed
  const std::vector<PolicyWaiver>& policy_waivers;
  const Location& location;
  std::variant<const DesiredVpc*, const DesiredService*, const DesiredReplicaSet*, const DesiredPeering*,
               const DesiredRole*, const DesiredSchema*, const DesiredExtension*, const DesiredGrant*>
      declared;

  nlohmann::json settings() const;  // settings_json() of the declaration
};
using DeclarationVisitor = std::function<void(const Declaration&)>;

// Every declaration of `project`, each followed by those that live in it: the VPCs with their
// peerings, then the services with their read replica sets and their database's roles, schemas,
// extensions and grants (the order plans list them in).
void for_each_declaration(const DesiredProject& project, const DeclarationVisitor& visit);
// Whether `project` declares anything.
bool declares_any(const DesiredProject& project);
// Moves into `into` the declarations of `from` that `keep` accepts (asked in the walk's order);
// what lives in one it refuses goes with it, unasked.
void move_declarations(DesiredProject& from, DesiredProject& into, const std::function<bool(const Declaration&)>& keep);

struct Manifest {
  std::vector<DesiredProject> projects;  // merged by id, in order of first appearance
  std::vector<std::string> files;        // every file read, in the order read
  std::string digest;                    // sha256 over the files' names and contents
};

// The settings a resource is created from, as the JSON object that is stored in the state and
// compared by the differ. Keys are the manifest's field names; unset optional fields are absent.
// Each kind's is in its file (kind_NAME.cpp).
nlohmann::json service_settings(const DesiredService& s);
nlohmann::json vpc_settings(const DesiredVpc& v);
nlohmann::json replica_set_settings(const DesiredReplicaSet& r);
nlohmann::json peering_settings(const DesiredPeering& p);
inline nlohmann::json settings_json(const DesiredService& s) { return service_settings(s); }
inline nlohmann::json settings_json(const DesiredVpc& v) { return vpc_settings(v); }
inline nlohmann::json settings_json(const DesiredReplicaSet& r) { return replica_set_settings(r); }
inline nlohmann::json settings_json(const DesiredPeering& p) { return peering_settings(p); }
nlohmann::json role_settings(const DesiredRole& r);
nlohmann::json schema_settings(const DesiredSchema& s);
nlohmann::json extension_settings(const DesiredExtension& x);
nlohmann::json grant_settings(const DesiredGrant& g);
inline nlohmann::json settings_json(const DesiredRole& r) { return role_settings(r); }
inline nlohmann::json settings_json(const DesiredSchema& s) { return schema_settings(s); }
inline nlohmann::json settings_json(const DesiredExtension& x) { return extension_settings(x); }
inline nlohmann::json settings_json(const DesiredGrant& g) { return grant_settings(g); }

// Names of projects and resources: 1-128 of [A-Za-z0-9_-], starting with a letter or digit. '/' and
// '.' would make addresses (PROJECT/services/NAME) and output paths (NAME.FIELD) ambiguous.
inline constexpr size_t kMaxNameLength = 128;  // the vendor's limit on service names
bool is_valid_name(std::string_view s);

// PROJECT/services/NAME, PROJECT/vpcs/NAME; PROJECT/services/PARENT/replicas/NAME,
// PROJECT/vpcs/PARENT/peerings/NAME for the kinds that live in another (`parent`: its name). A
// grant's name has slashes of its own: PROJECT/services/S/grants/ROLE/SCHEMA[/tables[/TABLE]].
std::string resource_address(const std::string& project_id, ResourceKind kind, const std::string& name,
                             const std::string& parent = "");

// What a full address names; nullopt for text that is not one.
struct AddressParts {
  std::string project_id;
  ResourceKind kind;
  std::string name, parent;
};
std::optional<AddressParts> parse_address(std::string_view address);

}  // namespace dbform
