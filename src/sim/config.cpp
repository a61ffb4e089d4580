// load_sim_config: the simulator's YAML config file. Every mistake names the file, line and
// column, and for an unknown key the closest known one.
#include <yaml-cpp/yaml.h>

#include <set>

#include "sim/simulator.h"
#include "util/atomic_file.h"
#include "util/diagnostics.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/text.h"

namespace dbform {

namespace {

const std::vector<std::string> kTopKeys = {"keys",           "queued_delay", "configuring_delay",
                                            "upgrading_delay", "deleting_delay", "seed", "faults"};
const std::vector<std::string> kKeyKeys = {"key", "project", "name"};
const std::vector<std::string> kFaultKeys = {"error_rate", "latency", "rate_limit_every", "retry_after",
                                             "stuck",      "deleted", "unstable",         "drop_create_every",
                                             "lose_answer_every", "gateway_timeout_every", "list_lag",
                                             "create_answer_delay", "garbled_errors"};

class ConfigReader {
 public:
  explicit ConfigReader(std::string path) : path_(std::move(path)) {}

  SimConfig read(const YAML::Node& root) {
    SimConfig config;
    if (!root || root.IsNull()) return config;
    expect_map(root, "the config");
    check_keys(root, kTopKeys, "the config");
    if (root["keys"]) config.keys = keys(root["keys"]);
    if (root["queued_delay"]) config.queued_delay = duration(root["queued_delay"], "queued_delay");
    if (root["configuring_delay"]) {
      config.configuring_delay = duration(root["configuring_delay"], "configuring_delay");
    }
    if (root["upgrading_delay"]) config.upgrading_delay = duration(root["upgrading_delay"], "upgrading_delay");
    if (root["deleting_delay"]) config.deleting_delay = duration(root["deleting_delay"], "deleting_delay");
    if (root["seed"]) config.seed = static_cast<unsigned>(integer(root["seed"], "seed", 0, 4294967295LL));
    if (root["faults"]) config.faults = faults(root["faults"]);
    return config;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message, const std::string& hint = {}) const {
    Location where{path_, node.Mark().line + 1, node.Mark().column + 1};
    if (node.Mark().is_null()) where = Location{path_};
    std::string text = where.str() + ": " + message;
    if (!hint.empty()) text += " (" + hint + ")";
    throw UsageError(text);
  }

  void expect_map(const YAML::Node& node, const std::string& what) const {
    if (!node.IsMap()) fail(node, what + " must be a mapping of keys to values");
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& what) const {
    for (const auto& entry : map) {
      std::string key = entry.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string guess = closest_match(key, known);
      fail(entry.first, "unknown key `" + key + "` in " + what,
           guess.empty() ? "known keys: " + join(known, ", ") : "did you mean `" + guess + "`?");
    }
  }

  std::string text(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar() || node.Scalar().empty()) fail(node, field + " must be a non-empty string");
    return node.Scalar();
  }

  Duration duration(const YAML::Node& node, const std::string& field) const {
    auto parsed = node.IsScalar() ? parse_duration(node.Scalar()) : std::nullopt;
    if (!parsed) fail(node, field + " must be a duration such as 500ms, 2s or 1m");
    return *parsed;
  }

  long long integer(const YAML::Node& node, const std::string& field, long long low, long long high) const {
    long long value = 0;
    if (!node.IsScalar() || !YAML::convert<long long>::decode(node, value) || value < low || value > high) {
      fail(node, field + " must be an integer from " + std::to_string(low) + " to " + std::to_string(high));
    }
    return value;
  }

  std::vector<std::string> names(const YAML::Node& node, const std::string& field) const {
    if (!node.IsSequence()) fail(node, field + " must be a list of service names (globs with * allowed)");
    std::vector<std::string> out;
    for (const auto& item : node) out.push_back(text(item, field + " item"));
    return out;
  }

  std::vector<SimKey> keys(const YAML::Node& node) const {
    if (!node.IsSequence()) fail(node, "keys must be a list of {key, project, name}");
    std::vector<SimKey> out;
    std::set<std::string> seen;
    for (const auto& item : node) {
      expect_map(item, "each item of keys");
      check_keys(item, kKeyKeys, "a key");
      if (!item["key"] || !item["project"]) fail(item, "each item of keys needs `key` and `project`");
      SimKey key{text(item["key"], "key"), text(item["project"], "project")};
      if (item["name"]) key.name = text(item["name"], "name");
      if (!seen.insert(key.key).second) fail(item["key"], "the same key is listed twice; a key belongs to one project");
      out.push_back(key);
    }
    return out;
  }

  SimFaults faults(const YAML::Node& node) const {
    expect_map(node, "faults");
    check_keys(node, kFaultKeys, "faults");
    SimFaults faults;
    if (node["error_rate"]) {
      double rate = -1;
      if (!YAML::convert<double>::decode(node["error_rate"], rate) || rate < 0 || rate > 1) {
        fail(node["error_rate"], "error_rate must be a number from 0 to 1, e.g. 0.1 for one call in ten");
      }
      faults.error_rate = rate;
    }
    if (node["latency"]) faults.latency = duration(node["latency"], "latency");
    if (node["rate_limit_every"]) faults.rate_limit_every = integer(node["rate_limit_every"], "rate_limit_every", 0, 1'000'000);
    if (node["retry_after"]) {
      auto wait = duration(node["retry_after"], "retry_after");
      faults.retry_after_seconds = static_cast<int>((wait.count() + 999) / 1000);  // Retry-After is whole seconds
    }
    if (node["stuck"]) faults.stuck = names(node["stuck"], "stuck");
    if (node["deleted"]) faults.deleted = names(node["deleted"], "deleted");
    if (node["unstable"]) faults.unstable = names(node["unstable"], "unstable");
    if (node["drop_create_every"]) {
      faults.drop_create_every = integer(node["drop_create_every"], "drop_create_every", 0, 1'000'000);
    }
    if (node["lose_answer_every"])
      faults.lose_answer_every = integer(node["lose_answer_every"], "lose_answer_every", 0, 1'000'000);
    if (node["gateway_timeout_every"])
      faults.gateway_timeout_every = integer(node["gateway_timeout_every"], "gateway_timeout_every", 0, 1'000'000);
    if (node["list_lag"]) faults.list_lag = duration(node["list_lag"], "list_lag");
    if (node["create_answer_delay"]) faults.create_answer_delay = duration(node["create_answer_delay"], "create_answer_delay");
    if (node["garbled_errors"]) {
      bool garbled = false;
      if (!node["garbled_errors"].IsScalar() || !YAML::convert<bool>::decode(node["garbled_errors"], garbled))
        fail(node["garbled_errors"], "garbled_errors must be true or false");
      faults.garbled_errors = garbled;
    }
    return faults;
  }

  std::string path_;
};

}  // namespace

SimConfig load_sim_config(const std::string& path) {
  YAML::Node root;
  std::optional<std::string> text;
  try {
    text = read_file_if_exists(path, Links::Follow, size_t{1} << 20);  // a regular file of at most 1 MiB
  } catch (const Error& e) {
    throw UsageError("cannot read simulator config: " + std::string(e.what()));
  }
  if (!text) throw UsageError("cannot read simulator config " + path + ": no such file");
  try {
    root = YAML::Load(*text);
  } catch (const YAML::ParserException& e) {
    throw UsageError(Location{path, e.mark.line + 1, e.mark.column + 1}.str() + ": not valid YAML: " + e.msg);
  }
  return ConfigReader(path).read(root);
}

}  // namespace dbform
