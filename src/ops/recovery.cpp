#include "ops/recovery.h"

#include <unistd.h>

#include <filesystem>

#include "state/codec.h"
#include "state/file_store.h"
#include "util/atomic_file.h"
#include "util/env.h"

namespace dbform {

namespace fs = std::filesystem;

std::string save_recovery_file(const State& state, const StateStore& store, const std::string& why,
                               const EnvLookup& env) {
  State next = state;
  ++next.serial;  // newer than anything the store holds
  const std::string text = serialize_state(next, store.cipher());

  std::vector<fs::path> dirs;
  const std::string where = store.describe();
  if (dynamic_cast<const FileStateStore*>(&store)) dirs.push_back(fs::absolute(where).parent_path());
  dirs.push_back(env("TMPDIR").value_or("/tmp"));
  if (auto home = env("HOME")) dirs.push_back(*home);
  std::string head = "the state could not be saved to " + where + ": " + why +
                     "\nNothing more was created after that. ";
  for (const auto& dir : dirs) {
    std::string file;
    try {
      // It holds passwords: a new file of ours, 0600, under a name nobody could have prepared.
      file = write_new_private_file(dir.string(), "dbform.state.recovery-", ".json", text);
    } catch (const Error&) {
      continue;
    }
    return head + "Everything this run learned (ids, passwords, unfinished creates) is in\n  " + file +
           "\nOnce " + where + " can be written again, restore it with\n  dbform state push " + file + " " +
           store.command_line_args() + "\nand run apply again; nothing will be created twice.";
  }
  std::string list;
  for (const auto& r : state.resources)
    list += "\n  " + r.address + (r.id.empty() ? " (create outcome unknown)" : " id " + r.id);
  return head + "No recovery file could be written either. These resources exist or may exist:" + list;
}

std::string save_failure_message(const ApplyResult& result, const State& state, const StateStore& store,
                                 const EnvLookup& env) {
  if (result.unsaved_changes) return save_recovery_file(state, store, result.save_error, env);
  return "the state could not be saved to " + store.describe() + ": " + result.save_error +
         "\nNothing was created after that, and everything created before is recorded. Fix the problem and "
         "run apply again.";
}

}  // namespace dbform
