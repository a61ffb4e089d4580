#include "manifest/terraform_mapping.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "manifest/model.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform {

using nlohmann::json;

namespace {

}  // namespace

bool is_masked_terraform_value(const json& v) {
  if (!v.is_string()) return false;
  const std::string text = lower(trim(v.get_ref<const std::string&>()));
  return text == "(sensitive value)" || text == "(sensitive)" || text == "<sensitive>" || text == "(known after apply)";
}

namespace {

// Text for a YAML comment and a message: one line of printable ASCII.
std::string tf_comment_text(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  return out;
}

// The attributes of one kind, as the provider's schema (v2.13.3) has them: those dbform maps, those
// it reads and needs not keep (computed, Terraform's own, the password --passwords moves), and
// those it does not manage, each with why.
struct TfAttributes {
  std::set<std::string> mapped;
  std::set<std::string> quiet;
  std::map<std::string, std::string> unmanaged;
};

const TfAttributes kTfService = {
    {"id", "name", "milli_cpu", "memory_gb", "region_code", "ha_replicas", "sync_replicas", "enable_ha_replica",
     "environment_tag", "connection_pooler_enabled", "paused", "vpc_id", "read_replica_source", "read_replica_nodes"},
    {"hostname", "port", "pooler_hostname", "pooler_port", "replica_hostname", "replica_port", "username", "password",
     "password_wo", "timeouts"},
    {{"data_tiering_enabled", "data tiering: dbform does not manage it, and it cannot be turned off"},
     {"log_exporter_id", "a log exporter's attachment: dbform does not manage exporters"},
     {"metric_exporter_id", "a metric exporter's attachment: dbform does not manage exporters"},
     {"storage_gb", "deprecated by the provider; storage grows by itself"},
     {"password_wo_version", "dbform keeps the password itself (`dbform rotate-password` sets a new one)"}}};

const TfAttributes kTfVpc = {{"id", "name", "cidr", "region_code", "project_id"},
                             {"created", "updated", "status", "error_message", "provisioned_id", "timeouts"},
                             {}};

const TfAttributes kTfPeering = {
    {"id", "timescale_vpc_id", "peer_account_id", "peer_region_code", "peer_vpc_id", "peer_tgw_id"},
    {"accepter_provisioned_id", "error_message", "peering_type", "provisioned_id", "status", "vpc_id", "peer_cidr",
     "timeouts"},
    {{"peer_cidr_blocks", "the CIDR blocks of a peering: dbform peers whole VPCs"}}};

// module.db.timescale_service.orders: Terraform's syntax for a resource's address (module calls,
// then a type and a name, each an identifier: a letter or '_' first, then letters, digits, '_' and
// '-'), so that a removed block's `from` holds an address and nothing else.
bool is_tf_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '_' || c == '-')) return false;
  return true;
}

bool is_plain_tf_address(std::string_view address) {
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t dot = address.find('.', from);
    parts.push_back(address.substr(from, dot == std::string_view::npos ? std::string_view::npos : dot - from));
    if (dot == std::string_view::npos) break;
    from = dot + 1;
  }
  if (parts.size() < 2 || parts.size() % 2 != 0) return false;
  for (size_t i = 0; i + 2 < parts.size(); i += 2)
    if (parts[i] != "module" || !is_tf_identifier(parts[i + 1])) return false;
  return is_tf_identifier(parts[parts.size() - 2]) && is_tf_identifier(parts.back());
}

bool tf_is_set(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();  // json::empty() is false for "": not a container
  if (v.is_array() || v.is_object()) return !v.empty();
  return true;
}

class TerraformMapper {
 public:
  TerraformMapper(const std::map<std::string, std::string>& projects, const std::string& file) : projects_(projects), file_(file) {}

  void map(const TerraformState& state) {
    std::vector<const TerraformInstance*> services, replicas, vpcs, peerings;
    for (const auto& in : state.instances) {
      if (!is_timescale_provider(in.provider)) {
        ++out_.other_providers;
        continue;
      }
      if (in.type == "timescale_vpcs") vpcs.push_back(&in);
      else if (in.type == "timescale_peering_connection") peerings.push_back(&in);
      else if (in.type == "timescale_service") {
        const json* source = attr(in, "read_replica_source");
        (source && source->is_string() && !source->get<std::string>().empty() ? replicas : services).push_back(&in);
      } else {
        leave(in, "a resource type dbform does not manage; Terraform keeps it", project_of(in));
      }
    }
    for (const auto* in : vpcs) map_vpc(*in);
    for (const auto* in : services) map_service(*in);
    for (const auto* in : replicas) map_replica(*in);
    for (const auto* in : peerings) map_peering(*in);
    if (!problems_.empty())
      throw UsageError(file_ + ": nothing was written, these cannot be moved as they are:\n  " + join(problems_, "\n  "));
  }

  TerraformMapping take() { return std::move(out_); }

 private:
  const json* attr(const TerraformInstance& in, const char* key) {
    auto it = in.attributes.find(key);
    return it == in.attributes.end() || it->is_null() ? nullptr : &*it;
  }

  void leave(const TerraformInstance& in, const std::string& why, const std::string& project = "") {
    out_.left_out.push_back({tf_comment_text(in.address), tf_comment_text(why), project});
  }

  void problem(const TerraformInstance& in, const std::string& what) {
    problems_.push_back(tf_comment_text(in.address) + ": " + what);
  }

  // The project its provider configuration is given, or "" (and listed) when none is.
  std::string project_of(const TerraformInstance& in) {
    if (!in.configuration) return projects_.size() == 1 && projects_.count("") ? projects_.at("") : "";
    auto it = projects_.find(*in.configuration);
    return it == projects_.end() ? "" : it->second;
  }

  // Whether `in` can be moved at all; lists it when not.
  bool movable(const TerraformInstance& in, std::string& project) {
    if (!is_plain_tf_address(in.resource)) {
      leave(in, "its address is not one a removed block can name (module calls, a type and a name, each a letter "
                "or '_' and then letters, digits, '-' and '_')");
      return false;
    }
    if (in.keyed) {
      leave(in, "an instance of count or for_each, which a removed block cannot name: `terraform state mv '" +
                    tf_comment_text(in.address) + "' " + tf_comment_text(in.type) + ".NAME` first, then run this again");
      return false;
    }
    if (in.in_module_instance) {
      leave(in, "in an instance of a module with count or for_each, which a removed block cannot name: move it out "
                "with `terraform state mv` first");
      return false;
    }
    if (in.deposed) {
      leave(in, "a deposed object (a replacement's old half), which Terraform deletes at its next apply");
      return false;
    }
    if (in.tainted) {
      leave(in, "tainted: Terraform would replace it; `terraform untaint` it (or let Terraform replace it) first");
      return false;
    }
    project = project_of(in);
    if (project.empty()) {
      if (!in.configuration)
        leave(in, "`terraform show -json` does not say which provider configuration it uses: give `--project ID` "
                  "alone (every resource in that project), or read `terraform state pull`'s file");
      else
        leave(in, "its provider configuration " +
                      (in.configuration->empty() ? std::string("(the default)") : "`" + tf_comment_text(*in.configuration) + "`") +
                      " has no --project " + (in.configuration->empty() ? "ID" : tf_comment_text(*in.configuration) + "=ID") +
                      ": its project is not in Terraform's state, and dbform does not guess it");
      return false;
    }
    return true;
  }

  // A string attribute that must be there; records a problem and gives "" when it is not.
  std::string required_text(const TerraformInstance& in, const char* key) {
    const json* v = attr(in, key);
    if (!v) problem(in, std::string("records no `") + key + "` (" + in.where + ")");
    else if (is_masked_terraform_value(*v)) problem(in, std::string("its `") + key + "` is masked: read the state unmasked (`terraform state pull`)");
    else if (!v->is_string()) problem(in, std::string("`") + key + "` is not a string (" + in.where + ")");
    else return valid_utf8(v->get<std::string>());
    return "";
  }

  // An id: a string, or the number the provider records for VPCs and peerings.
  std::string id_of(const TerraformInstance& in, const char* key = "id") {
    const json* v = attr(in, key);
    if (v && v->is_number_integer()) return std::to_string(v->get<long long>());
    return required_text(in, key);
  }

  // A number of the provider's (milli_cpu, memory_gb) as dbform's canonical text: "1000", "0.5".
  std::optional<std::string> size_text(const TerraformInstance& in, const char* key) {
    const json* v = attr(in, key);
    if (!v) return std::nullopt;
    if (v->is_number_integer()) return std::to_string(v->get<long long>());
    if (v->is_number_float() && std::isfinite(v->get<double>())) {
      const double d = v->get<double>();
      if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
      return v->dump();
    }
    problem(in, std::string("`") + key + "` is not a number (" + in.where + ")");
    return std::nullopt;
  }

  std::optional<long long> whole(const TerraformInstance& in, const char* key) {
    const json* v = attr(in, key);
    if (!v) return std::nullopt;
    if (v->is_number_integer()) return v->get<long long>();
    problem(in, std::string("`") + key + "` is not a whole number (" + in.where + ")");
    return std::nullopt;
  }

  template <typename T>
  void copy(const TerraformInstance& in, const char* from, json& settings, const char* to) {
    const json* v = attr(in, from);
    if (!v) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v->is_boolean()) return problem(in, std::string("`") + from + "` is not a boolean (" + in.where + ")");
    } else {
      if (is_masked_terraform_value(*v)) return problem(in, std::string("its `") + from + "` is masked");
      if (!v->is_string()) return problem(in, std::string("`") + from + "` is not a string (" + in.where + ")");
    }
    settings[to] = *v;
  }

  // The attributes dbform leaves behind, and those the provider's schema does not have.
  std::vector<std::string> left_behind(const TerraformInstance& in, const TfAttributes& kind) {
    std::vector<std::string> notes;
    for (const auto& [key, value] : in.attributes.items()) {
      if (kind.mapped.count(key) || kind.quiet.count(key) || !tf_is_set(value)) continue;
      auto why = kind.unmanaged.find(key);
      notes.push_back(tf_comment_text(key) + " (" +
                      (why != kind.unmanaged.end() ? why->second
                                                   : std::string("not in the provider's schema (v2.13.3): left behind")) +
                      ")");
    }
    return notes;
  }

  std::string name_of(const TerraformInstance& in) {
    const std::string name = required_text(in, "name");
    if (!name.empty() && !is_valid_name(name))
      problem(in, "its name " + json(valid_utf8(name.substr(0, 80))).dump() + (name.size() > 80 ? "..." : "") +
                      " is not one dbform's addresses can hold (1-" + std::to_string(kMaxNameLength) +
                      " letters, digits, '-' and '_', starting with a letter or digit): rename it with Terraform first");
    return name;
  }

  void add(const TerraformInstance& in, const std::string& project, FoundResource found, const TfAttributes& kind) {
    const std::string address = resource_address(project, found.kind, found.name, found.parent);
    // A read replica is a timescale_service too: one id space per Terraform type.
    const std::string key = in.type + " " + found.id;
    const std::string shown = tf_comment_text(in.address);
    if (auto [at, fresh] = ids_.emplace(key, shown); !fresh)
      problems_.push_back(shown + " and " + at->second + " both name " + kind_noun(found.kind) + " " +
                          tf_comment_text(found.id) + ": remove one from Terraform's state (`terraform state rm`) first");
    if (auto [at, fresh] = addresses_.emplace(address, shown); !fresh)
      problems_.push_back(shown + " and " + at->second + " would both be " + address + ": rename one first");
    TerraformMove move{project, std::move(found), shown, in.resource, left_behind(in, kind)};
    move.found.comment = "from " + tf_comment_text(in.address) +
                         (move.not_moved.empty() ? "" : "; not moved: " + join(move.not_moved, ", "));
    out_.moves.push_back(std::move(move));
  }

  void map_vpc(const TerraformInstance& in) {
    std::string project;
    if (!movable(in, project)) return;
    FoundResource f{ResourceKind::Vpc, "", name_of(in), id_of(in), json::object()};
    copy<std::string>(in, "cidr", f.settings, "cidr");
    copy<std::string>(in, "region_code", f.settings, "region_code");
    if (const json* recorded = attr(in, "project_id"); recorded && recorded->is_string() && *recorded != project)
      return problem(in, "records project " + json(one_line_excerpt(recorded->get<std::string>(), 64)).dump() +
                             ", not " + project + " as --project gives for its provider configuration");
    vpc_names_[project + "\n" + f.id] = f.name;
    add(in, project, std::move(f), kTfVpc);
  }

  void map_service(const TerraformInstance& in) {
    std::string project;
    if (!movable(in, project)) return;
    FoundResource f{ResourceKind::Service, "", name_of(in), id_of(in), json::object()};
    if (auto cpu = size_text(in, "milli_cpu")) f.settings["cpu_millis"] = *cpu;
    if (auto memory = size_text(in, "memory_gb")) f.settings["memory_gbs"] = *memory;
    copy<std::string>(in, "environment_tag", f.settings, "environment_tag");
    copy<std::string>(in, "region_code", f.settings, "region_code");
    std::optional<long long> ha = whole(in, "ha_replicas");
    if (const json* old = attr(in, "enable_ha_replica"); !ha && old && old->is_boolean()) ha = old->get<bool>() ? 1 : 0;
    if (ha) f.settings["replica_count"] = *ha;
    if (auto sync = whole(in, "sync_replicas"); sync && ha) f.settings["sync_replica_count"] = *sync;
    if (auto vpc = whole(in, "vpc_id"); vpc && *vpc != 0) {
      auto named = vpc_names_.find(project + "\n" + std::to_string(*vpc));
      if (named == vpc_names_.end())
        return leave(in, "attached to VPC " + std::to_string(*vpc) + ", which is not moved with it from this state: "
                         "dbform would declare it in no VPC",
                     project);
      f.settings["vpc"] = named->second;
    }
    copy<bool>(in, "connection_pooler_enabled", f.settings, "connection_pooler");
    copy<bool>(in, "paused", f.settings, "paused");
    service_names_[project + "\n" + f.id] = f.name;
    add(in, project, std::move(f), kTfService);
  }

  // A read replica is a service of the provider's with read_replica_source; dbform's read replica
  // set of that service.
  void map_replica(const TerraformInstance& in) {
    std::string project;
    if (!movable(in, project)) return;
    const std::string source = required_text(in, "read_replica_source");
    auto parent = service_names_.find(project + "\n" + source);
    if (parent == service_names_.end())
      return leave(in, "a read replica of service " + tf_comment_text(source) + ", which is not moved from this state",
                   project);
    FoundResource f{ResourceKind::ReplicaSet, parent->second, name_of(in), id_of(in), json::object()};
    f.settings["nodes"] = whole(in, "read_replica_nodes").value_or(1);
    for (const auto& [from, to] : {std::pair{"milli_cpu", "cpu_millis"}, std::pair{"memory_gb", "memory_gbs"}}) {
      if (auto v = whole(in, from)) f.settings[to] = *v;
      else problem(in, std::string("a read replica records no whole `") + from + "` (" + in.where + ")");
    }
    copy<std::string>(in, "environment_tag", f.settings, "environment_tag");
    copy<bool>(in, "connection_pooler_enabled", f.settings, "connection_pooler");
    TfAttributes kind = kTfService;
    for (const char* key : {"region_code", "paused", "ha_replicas", "sync_replicas", "enable_ha_replica"}) {
      kind.mapped.erase(key);
      kind.quiet.insert(key);  // a replica follows its service's
    }
    kind.mapped.erase("vpc_id");
    kind.unmanaged["vpc_id"] = "a read replica set's VPC: dbform gives it its service's";
    add(in, project, std::move(f), kind);
  }

  void map_peering(const TerraformInstance& in) {
    std::string project;
    if (!movable(in, project)) return;
    if (const json* tgw = attr(in, "peer_tgw_id"); tgw && tf_is_set(*tgw))
      return leave(in, "a Transit Gateway peering: dbform peers VPCs only; Terraform keeps it", project);
    const std::string vpc = id_of(in, "timescale_vpc_id");
    auto parent = vpc_names_.find(project + "\n" + vpc);
    if (parent == vpc_names_.end())
      return leave(in, "a peering of VPC " + tf_comment_text(vpc) + ", which is not moved from this state", project);
    const std::string peer = required_text(in, "peer_vpc_id");
    FoundResource f{ResourceKind::Peering, parent->second, peer, id_of(in), json::object()};
    copy<std::string>(in, "peer_account_id", f.settings, "peer_account_id");
    copy<std::string>(in, "peer_region_code", f.settings, "peer_region_code");
    f.settings["peer_vpc_id"] = peer;
    add(in, project, std::move(f), kTfPeering);
  }

  const std::map<std::string, std::string>& projects_;
  const std::string& file_;
  TerraformMapping out_;
  std::vector<std::string> problems_;
  std::map<std::string, std::string> ids_, addresses_;
  std::map<std::string, std::string> vpc_names_, service_names_;  // "PROJECT\nID" -> name
};

}  // namespace

TerraformMapping map_terraform_state(const TerraformState& state, const std::map<std::string, std::string>& projects,
                                     const std::string& file) {
  TerraformMapper mapper(projects, file);
  mapper.map(state);
  return mapper.take();
}

std::string terraform_removed_blocks(const std::vector<TerraformMove>& moves, const std::string& state_file) {
  std::string out =
      "# Written by `dbform import --from-terraform " + tf_comment_text(state_file) +
      "`: Terraform forgets each resource below\n"
      "# without destroying it (Terraform 1.7 or later). Once dbform's apply has imported them: put this file\n"
      "# in the Terraform configuration, delete the resource blocks it names, run `terraform plan` (each shows\n"
      "# \"will no longer be managed by Terraform\", none is destroyed), then `terraform apply`.\n";
  std::set<std::string> done;
  for (const auto& m : moves) {
    if (!done.insert(m.from).second) continue;
    out += "\nremoved {\n  from = " + m.from + "\n\n  lifecycle {\n    destroy = false\n  }\n}\n";
  }
  return out;
}

}  // namespace dbform
