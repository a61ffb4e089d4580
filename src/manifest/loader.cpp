#include "manifest/loader.h"

#include <algorithm>
#include <map>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>

#include <openssl/evp.h>

#include "manifest/document.h"
#include "manifest/interpolate.h"
#include "manifest/interpolated_secrets.h"
#include "manifest/manifest_files.h"
#include "manifest/yaml_tree.h"
#include "util/atomic_file.h"
#include "util/parallel.h"
#include "util/text.h"

namespace fs = std::filesystem;

namespace dbform {

namespace {


// sha256 over every file's name and contents, each framed by its length so that no two different
// sets of files can feed the same bytes to the hash.
class ManifestDigest {
 public:
  ManifestDigest() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
  void add(const std::string& name, const std::string& contents) {
    add_framed(name);
    add_framed(contents);
  }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_.get(), md, &size);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 0xF];
    }
    return out;
  }

 private:
  void add_framed(const std::string& s) {
    std::string length = std::to_string(s.size()) + ":";
    EVP_DigestUpdate(ctx_.get(), length.data(), length.size());
    EVP_DigestUpdate(ctx_.get(), s.data(), s.size());
  }
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

// Merges the projects of every document: projects that share an id become one, and a resource
// (project, kind, name) declared twice is an error that names both places.
class ProjectMerger {
 public:
  ProjectMerger(Manifest& manifest, Diagnostics& diags) : manifest_(manifest), diags_(diags) {}

  // Every `vpc:` names a VPC its project declares (in any of the files).
  void check_vpc_references() {
    for (const DesiredProject* declared : checked_projects()) {
      const DesiredProject& project = *declared;
      std::vector<std::string> vpcs;
      for (const auto& v : project.vpcs) vpcs.push_back(v.name);
      for (const auto& s : project.services) {
        if (!s.vpc || std::find(vpcs.begin(), vpcs.end(), *s.vpc) != vpcs.end()) continue;
        std::string guess = closest_match(*s.vpc, vpcs);
        diags_.error(s.vpc_location, s.vpc_path.empty() ? "vpc" : s.vpc_path,
                     "service `" + s.name + "` names vpc `" + *s.vpc + "`, which " + project_words(project) +
                         " does not declare",
                     guess.empty() ? "declare it under `vpcs:` of " + project_words(project) + ", or remove the line"
                                   : "did you mean `" + guess + "`?");
      }
    }
  }

  // A `renamed_from` names a recorded name that is no longer declared: not the resource's own
  // name, not another declared resource, and not the old name of a second rename.
  void check_renames() {
    for (const DesiredProject* declared : checked_projects()) {
      const DesiredProject& project = *declared;
      auto check = [&](const auto& resources, const char* noun) {
        std::map<std::string, std::string> taken;  // old name -> who renames from it
        for (const auto& r : resources) {
          if (!r.renamed_from) continue;
          const std::string& old = *r.renamed_from;
          const bool declared = std::any_of(resources.begin(), resources.end(), [&](const auto& o) { return o.name == old; });
          std::string problem;
          if (old == r.name) problem = "renamed_from names the " + std::string(noun) + " itself";
          else if (declared) problem = std::string(noun) + " `" + old + "` is still declared, so `" + r.name + "` cannot be renamed from it";
          else if (!taken.emplace(old, r.name).second)
            problem = "`" + taken[old] + "` is renamed from `" + old + "` too: one record cannot become two";
          if (!problem.empty())
            diags_.error(r.location, r.path.empty() ? "renamed_from" : r.path + ".renamed_from", problem,
                         "remove `renamed_from`, or name the old name it was recorded under");
        }
      };
      check(project.vpcs, "VPC");
      check(project.services, "service");
    }
  }

  // An address under `removed:` is declared nowhere (forgetting and managing a resource at once is
  // no decision), and an import is not also a rename or a fork (it adopts what exists as it is).
  void check_removed_and_imports() {
    for (const auto& project : manifest_.projects) {
      for (const auto& r : project.removed)
        if (auto declared = declared_.find(r.address); declared != declared_.end())
          diags_.error(r.location, "removed",
                       "`" + r.address + "` is listed under `removed:` and declared at " + declared->second.str() +
                           ": it cannot be both forgotten and managed",
                       "remove the declaration to forget it (the resource stays in the API), or remove it from "
                       "`removed:` to keep managing it");
      for (const auto& s : project.services)
        if (s.import_id && (s.renamed_from || s.fork))
          diags_.error(s.location, s.fork ? "fork" : "renamed_from",
                       "service `" + s.name + "` has `import_id` and `" + (s.fork ? "fork" : "renamed_from") +
                           "`: an import records an existing service as it is",
                       "remove one of the two");
      for (const auto& v : project.vpcs)
        if (v.import_id && v.renamed_from)
          diags_.error(v.location, "renamed_from",
                       "VPC `" + v.name + "` has `import_id` and `renamed_from`: an import records an existing VPC as it is",
                       "remove one of the two");
    }
  }

  // The services a `previews:` block forks are services its project declares (in any of the files).
  void check_preview_services() {
    for (const DesiredProject* declared : checked_projects()) {
      if (!declared->previews) continue;
      const DesiredPreviews& previews = *declared->previews;
      std::vector<std::string> names;
      for (const auto& s : declared->services) names.push_back(s.name);
      for (size_t i = 0; i < previews.services.size(); ++i) {
        const std::string& name = previews.services[i];
        if (std::find(names.begin(), names.end(), name) != names.end()) continue;
        const std::string guess = closest_match(name, names);
        diags_.error(previews.service_locations[i], previews.path + ".services[" + std::to_string(i) + "]",
                     "`" + name + "` is not a service of " + project_words(*declared) +
                         ": a preview forks services the project declares",
                     guess.empty() ? "declare it under `services:`, or remove it from the list"
                                   : "did you mean `" + guess + "`?");
      }
    }
  }

  // A fork's `from` names another service its project declares (in any of the files), and forks do
  // not go round in a circle.
  void check_fork_sources() {
    for (const DesiredProject* declared : checked_projects()) {
      const DesiredProject& project = *declared;
      std::map<std::string, std::string> source_of;  // fork -> source
      std::vector<std::string> names;
      for (const auto& s : project.services) names.push_back(s.name);
      for (const auto& s : project.services) {
        if (!s.fork) continue;
        const bool known = std::find(names.begin(), names.end(), s.fork->from) != names.end();
        if (s.fork->from == s.name || !known) {
          std::string guess = closest_match(s.fork->from, names);
          diags_.error(s.fork->location, fork_from_path(*s.fork),
                       s.fork->from == s.name ? "service `" + s.name + "` cannot be a fork of itself"
                                              : "service `" + s.name + "` is a fork of `" + s.fork->from +
                                                    "`, which " + project_words(project) + " does not declare",
                       guess.empty() || guess == s.name ? "declare the source service in the same project"
                                                        : "did you mean `" + guess + "`?");
          continue;
        }
        source_of[s.name] = s.fork->from;
      }
      for (const auto& [fork, first] : source_of) {
        std::string at = first;
        for (size_t steps = 0; steps <= source_of.size() && source_of.count(at); ++steps) at = source_of[at];
        if (source_of.count(at))  // still a fork after as many steps as there are forks: a circle
          for (const auto& s : project.services)
            if (s.name == fork)
              diags_.error(s.fork->location, fork_from_path(*s.fork), "forks of " + project_words(project) +
                           " go round in a circle through `" + fork + "`", "one of them must be an ordinary service");
      }
    }
  }

  void add(DesiredProject&& p) {
    if (p.id.empty()) {  // its id was invalid (already reported); its references are checked all the same
      unidentified_.push_back(std::move(p));
      return;
    }
    DesiredProject& target = project_for(p);
    target.removed.insert(target.removed.end(), p.removed.begin(), p.removed.end());
    if (p.previews && target.previews)
      diags_.error(p.previews->location, "previews",
                   "project `" + p.id + "` has a `previews:` block here and at " + target.previews->location.str(),
                   "a project has one `previews:` block: keep one of the two");
    else if (p.previews)
      target.previews = std::move(p.previews);
    move_declarations(p, target, [&](const Declaration& d) {
      return first_declaration(p.id, d.kind, d.name, d.location, d.parent);
    });
  }

 private:
  DesiredProject& project_for(DesiredProject& p) {
    auto [it, inserted] = project_index_.emplace(p.id, manifest_.projects.size());
    if (inserted) {
      manifest_.projects.push_back({p.id, p.api_key_env, {}, {}, p.location, {}, p.wait_connectable, {}});
      return manifest_.projects.back();
    }
    DesiredProject& target = manifest_.projects[it->second];
    if (p.wait_connectable && target.wait_connectable && *p.wait_connectable != *target.wait_connectable)
      diags_.error(p.location, "wait_connectable",
                   "project `" + p.id + "` says wait_connectable: " + (*p.wait_connectable ? "true" : "false") +
                       " here but " + (*target.wait_connectable ? "true" : "false") + " at " + target.location.str(),
                   "use the same value in both places, or set it in one only");
    else if (p.wait_connectable)
      target.wait_connectable = p.wait_connectable;
    if (p.api_key_env && target.api_key_env && *p.api_key_env != *target.api_key_env) {
      diags_.error(p.location, "api_key_env",
                   "project `" + p.id + "` names api_key_env `" + *p.api_key_env + "` here but `" +
                       *target.api_key_env + "` at " + target.location.str(),
                   "a project has one key: use the same api_key_env in both places, or set it in one only");
    } else if (p.api_key_env) {
      target.api_key_env = p.api_key_env;
    }
    return target;
  }

  bool first_declaration(const std::string& project, ResourceKind kind, const std::string& name, const Location& at,
                         const std::string& parent = "") {
    const std::string key = resource_address(project, kind, name, parent);  // '/' cannot occur in ids or names
    auto [it, inserted] = declared_.emplace(key, at);
    if (!inserted)
      diags_.error(at, key,
                   std::string(kind_noun(kind)) + " `" + name + "` of " +
                       (parent.empty() ? "project `" + project + "`" : kind_noun(*parent_kind(kind)) + std::string(" `") + parent + "`") +
                       " is declared twice: here and at " + it->second.str(),
                   "remove one of the two, or give them different names");
    return inserted;
  }

  // The projects whose references are checked: the merged ones, and those whose id was invalid
  // (never planned, but every error of a run is reported together).
  std::vector<const DesiredProject*> checked_projects() const {
    std::vector<const DesiredProject*> out;
    for (const auto& p : manifest_.projects) out.push_back(&p);
    for (const auto& p : unidentified_) out.push_back(&p);
    return out;
  }
  static std::string project_words(const DesiredProject& p) {
    return p.id.empty() ? std::string("its project") : "project `" + p.id + "`";
  }
  static std::string fork_from_path(const DesiredFork& f) { return f.path.empty() ? "fork.from" : f.path + ".from"; }

  Manifest& manifest_;
  Diagnostics& diags_;
  std::vector<DesiredProject> unidentified_;
  std::unordered_map<std::string, size_t> project_index_;
  std::unordered_map<std::string, Location> declared_;
};

// What to do about a syntax error, from the line it is on: tabs and unquoted `${VAR}` in brackets
// are what people write by accident, and yaml-cpp's words for them do not say so.
std::string syntax_hint(const std::string& text, const YAML::Mark& at) {
  std::string line;
  if (!at.is_null() && at.pos >= 0 && static_cast<size_t>(at.pos) <= text.size()) {
    const size_t pos = static_cast<size_t>(at.pos);
    const size_t start = pos == 0 ? 0 : text.rfind('\n', pos - 1) + 1;  // npos + 1 is 0: the first line
    line = text.substr(start, text.find('\n', start) - start);
  }
  const std::string indent = line.substr(0, line.find_first_not_of(" \t"));
  if (indent.find('\t') != std::string::npos)
    return "this line is indented with a tab, which YAML does not allow: indent with spaces";
  for (const char* open : {"[${", "{${", "[ ${", ", ${"})
    if (line.find(open) != std::string::npos)
      return "a `${VAR}` inside [ ] or { } must be quoted, or YAML reads its braces as syntax: write \"${VAR}\"";
  return "check the indentation and brackets around this place";
}

std::vector<DesiredProject> parse_document(const std::string& name, const std::string& text, const EnvLookup& env,
                                           Diagnostics& diags, std::vector<InterpolatedValue>& interpolated) {
  const YamlText yaml(text, kMaxManifestNodes, kMaxManifestAliases);
  switch (yaml.problem()) {
    case YamlText::Problem::None:
      break;
    case YamlText::Problem::NotText: {
      const YAML::Mark& m = yaml.syntax_error_at();
      diags.error({name, m.line + 1, m.column + 1}, "", not_text_message(), not_text_hint("manifest"));
      return {};
    }
    case YamlText::Problem::Syntax: {
      const YAML::Mark& m = yaml.syntax_error_at();
      diags.error({name, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1}, "",
                  "YAML syntax error: " + yaml.syntax_error(), syntax_hint(text, m));
      return {};
    }
    case YamlText::Problem::TooLarge:
      diags.error({name}, "", "with its aliases expanded the file would hold more than " +
                                  std::to_string(kMaxManifestNodes) + " values (or use more than " +
                                  std::to_string(kMaxManifestAliases) + " aliases)",
                  "write the values out, or use fewer nested anchors");
      return {};
    case YamlText::Problem::Runaway:
      diags.error({name}, "", "YAML syntax error: the parser could not make sense of this file",
                  "check the indentation, commas and colons; a key written as `a,b:` is a common cause");
      return {};
  }
  const auto& documents = yaml.documents();
  if (documents.empty()) {  // an empty file reads as one empty document
    const YamlNode empty;
    return read_manifest_document(empty, name, env, diags, &interpolated);
  }
  if (documents.size() > 1) {
    const YAML::Mark& m = documents[1]->mark;
    diags.error({name, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1}, "",
                "a manifest file holds one YAML document, this one has " + std::to_string(documents.size()),
                "put each document (after a `---` line) in a file of its own");
  }
  return read_manifest_document(*documents[0], name, env, diags, &interpolated);
}


// One manifest file, read and parsed on its own (possibly on another thread): what it declares,
// its problems and the variables it used, merged later in the files' order. Without a file: the
// problems of one -f PATH itself, in their place among the files'.
struct ParsedFile {
  std::string file;
  Diagnostics diags;
  std::optional<std::string> text;
  std::vector<EnvUse> uses;
  std::vector<InterpolatedValue> interpolated;
  std::vector<DesiredProject> projects;
};

void parse_file(ParsedFile& f, const EnvLookup& env) {
  if (f.text) f.projects = parse_document(f.file, *f.text, recording_uses(env, f.uses, f.file), f.diags, f.interpolated);
}

// The files merged in their order into one manifest: what reading them one after another gives.
Manifest merge_files(std::vector<ParsedFile>& files, const EnvLookup& env, Diagnostics& diags) {
  Manifest manifest;
  Diagnostics found;  // shown once the secrets are known (api_key_env may be in any file)
  ProjectMerger merger(manifest, found);
  ManifestDigest digest;
  std::vector<EnvUse> uses;
  std::vector<InterpolatedValue> interpolated;
  for (auto& f : files) {
    for (const auto& d : f.diags.items()) found.add(d);
    if (!f.text) continue;
    manifest.files.push_back(f.file);
    digest.add(f.file, *f.text);
    f.text.reset();
    uses.insert(uses.end(), f.uses.begin(), f.uses.end());
    interpolated.insert(interpolated.end(), f.interpolated.begin(), f.interpolated.end());
    for (auto& project : f.projects) merger.add(std::move(project));
  }
  merger.check_vpc_references();
  merger.check_renames();
  merger.check_removed_and_imports();
  merger.check_fork_sources();
  merger.check_preview_services();
  add_hiding_secrets(manifest, env, uses, interpolated, found, diags);
  manifest.digest = digest.hex();
  return manifest;
}

}  // namespace

Manifest load_manifests(const std::vector<std::string>& paths, const EnvLookup& env, Diagnostics& diags) {
  if (paths.empty()) diags.error({}, "", "no manifest given", "pass -f FILE or -f DIRECTORY");
  std::vector<ParsedFile> files;
  SeenFiles seen;
  for (const auto& path : paths) {
    files.emplace_back();  // the path's own problems
    for (const auto& file : files_named_by(path, files.back().diags))
      if (seen.first_time(file)) files.emplace_back().file = file;
  }
  // Read and parsed side by side, each file with its own diagnostics and variable uses. At most four
  // at once: each holds its text's tree while it is read, and more cores gain little.
  for_each_in_parallel(files.size(), std::min(4u, std::thread::hardware_concurrency()), [&](size_t i) {
    ParsedFile& f = files[i];
    if (f.file.empty()) return;
    f.text = read_manifest_file(f.file, f.diags);
    parse_file(f, env);
  });
  return merge_files(files, env, diags);
}

Manifest load_manifest_text(const std::string& name, const std::string& text, const EnvLookup& env,
                            Diagnostics& diags) {
  std::vector<ParsedFile> files(1);
  files[0].file = name;
  files[0].text = text;
  parse_file(files[0], env);
  return merge_files(files, env, diags);
}

}  // namespace dbform
