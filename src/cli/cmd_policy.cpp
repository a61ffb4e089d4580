// `dbform policy check`: the rules against what the state records, an audit of what exists.
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/manual.h"
#include "cli/render_policy.h"
#include "ops/policy.h"
#include "plan/plan_file.h"
#include "util/error.h"
#include "util/json_limits.h"
#include "util/text.h"

namespace dbform::cli {

namespace {

struct CheckOptions {
  PolicyOptions policy;
  ManifestOptions manifests;
  StateOptions state;
  std::string format = "text";
};

std::string markdown_of(const PolicyCheckOutcome& out) {
  const PolicyCheck& c = out.check;
  std::string md = "### dbform policy check: " +
                   std::string(c.mandatory() ? std::to_string(c.mandatory()) + " mandatory violation(s)"
                               : c.advisory() ? std::to_string(c.advisory()) + " advisory violation(s)"
                                              : "no violation") +
                   "\n\n" + std::to_string(out.resources) + " recorded resource(s) checked against " +
                   policy_summary(c) + ".\n";
  if (!c.violations.empty()) md += "\n";
  for (const auto& item : policy_violation_items(c)) md += item;
  if (!c.waivers.empty()) md += "\nWaivers in force:\n\n";
  for (const auto& item : policy_waiver_items(c)) md += item;
  return md;
}

int run_check(const CheckOptions& opts, bool manifests_given) {
  const PolicySet policies = load_policies_or_throw(opts.policy);
  if (!policies.given())
    throw UsageError("no rule file to check: give --policy FILE (repeat for more) or set DBFORM_POLICY");
  std::optional<Manifest> manifest;
  if (manifests_given) manifest = load_manifests_or_throw(opts.manifests);
  auto store = open_state_store(opts.state);
  SystemClock clock;
  const PolicyCheckOutcome out = policy_check_operation(
      {.store = *store, .manifest = manifest ? &*manifest : nullptr, .policies = policies, .clock = clock});
  if (opts.format == "json") {
    nlohmann::ordered_json j = {{"resources", out.resources}, {"policies", policies_json(out.check)}};
    std::cout << dump_json(j, 2) << "\n";
  } else if (opts.format == "markdown") {
    std::cout << markdown_of(out);
  } else {
    if (out.state_missing) std::cout << no_state_note(*store) << "\n\n";
    std::cout << "Checked " << out.resources << " recorded resource(s).\n"
              << render_policies_text(out.check, detect_terminal());
  }
  return out.check.mandatory() ? 1 : 0;
}

}  // namespace

void add_policy_command(CLI::App& app, int& exit_code) {
  auto* cmd = add_command(app, "policy", "check a platform team's rules: in every plan, and against the state",
                          {.text = R"(A platform team's rules, in files that pull requests cannot edit: `plan` and `apply` check every plan against them with `--policy FILE` (repeatable) or `DBFORM_POLICY` (a `:`-separated list), and the pipeline reads them from the base branch. A rule file:

```
version: 1
rules:
  - id: prod-needs-ha
    level: mandatory
    kind: service
    where: {environment_tag: PROD}
    require: {replica_count: {">=": 1}, deletion_protection: true}
    message: "PROD services need an HA replica and deletion protection"
    waivable: true
  - id: no-prod-deletes
    level: mandatory
    kind: service
    where: {environment_tag: PROD}
    forbid_actions: [delete, replace]
```

Each rule has an `id` (lowercase letters, digits and '-', unique across the files), a `level` (`mandatory` refuses the plan, `advisory` warns), a `kind` (`service`, `vpc`, `replica_set`, `peering` or `preview`), optionally `where` (which resources it applies to), and `require` (what each field must be after the plan: declared, else recorded) or `forbid_actions` (create, update, delete, replace, rename, pause, import, forget), or both. A condition is a value (equal), or a mapping of `==`, `!=`, `>=`, `<=`, `>`, `<`, `in: [...]` and `present: true|false`. A file is validated as a manifest is: every error with file, line and column, an unknown key, kind, field, action or value with the closest known one.

A declaration's `policy_waivers` (rule, reason, expires) exempts it from a rule marked `waivable: true` until the expiry (a date, valid through that day in UTC, or a UTC time); every plan lists the waivers in force. An expired waiver, or one naming a rule that is not waivable or does not exist, is itself a violation. Rules of kind `preview` are checked by `preview up` against the forks it would make, before any call. docs/policies.md has every field.)",
                           .examples = {{"Audit what exists against the baseline", "dbform policy check --policy policies/baseline.yaml"},
                                        {"The same, with the manifests' waivers", "dbform policy check --policy policies/baseline.yaml -f manifests/"}}});
  cmd->require_subcommand(1);

  auto opts = std::make_shared<CheckOptions>();
  auto* check = add_command(*cmd, "check", "check the rules against what the state records (no API call, no key)",
                            {.text = R"(Checks every resource the state records (the settings dbform set, overlaid with what the API showed at the last refresh) against the rules: an audit of what exists, for a schedule. It reads the state without a lock and without its key, makes no API call and needs no API key. Only `require` applies (nothing is planned, so `forbid_actions` finds nothing); rules of kind `preview` apply to the recorded previews' forks. With `-f`, the manifests' `policy_waivers` count; without it, none does.

## Exit status

0 when no mandatory rule is broken, 1 when one is (or on an error).)",
                             .examples = {{"Nightly audit as JSON", "dbform policy check --policy baseline.yaml --format json"},
                                          {"As a markdown report", "DBFORM_POLICY=baseline.yaml:team.yaml dbform policy check --format markdown"}}});
  add_policy_options(*check, opts->policy);
  add_manifest_and_state_options(*check, opts->manifests, opts->state, false);
  check->add_option("--format", opts->format, "text (default), json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  check->callback([opts, check, &exit_code] { exit_code = run_check(*opts, check->count("--file") > 0); });
}

}  // namespace dbform::cli
