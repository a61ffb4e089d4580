#pragma once
#include "state/store.h"

namespace dbform {

// A JSON file. Writes go to FILE.tmp, are fsynced, renamed over FILE and the directory fsynced;
// the previous version is kept as FILE.backup; mode 0600. The lock is flock(2) on FILE.lock, whose
// content names the holder.
class FileStateStore : public StateStore {
 public:
  explicit FileStateStore(std::string path);
  std::optional<State> read() override;
  void write(State& state) override;
  std::unique_ptr<StateLock> lock(const std::string& operation, Duration timeout) override;
  std::string describe() const override { return path_; }
  std::string command_line_args() const override { return "--state " + path_; }

 private:
  // Lineage and serial of what is on disk, and the file's identity when we last saw it: a write
  // re-reads the file only when someone else has replaced it since.
  struct Seen {
    std::string lineage;
    long long serial = 0;
    std::string file_identity;
  };
  void remember(const State& state);
  std::string path_;
  std::optional<Seen> seen_;
};

}  // namespace dbform
