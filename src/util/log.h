#pragma once
// Messages on stderr for `--log-level` / DBFORM_LOG, through spdlog behind one seam: callers build
// the text, so no unit but log.cpp instantiates spdlog's formatting (each unit that did paid about
// 2 CPU-seconds of compile time for it).
#include <string>

namespace dbform::log {

enum class Level { Trace, Debug, Info, Warn };

// Whether a message of `level` is shown: to skip building one that would not be.
bool enabled(Level level);
void write(Level level, const std::string& message);

inline void trace(const std::string& message) { write(Level::Trace, message); }
inline void debug(const std::string& message) { write(Level::Debug, message); }
inline void info(const std::string& message) { write(Level::Info, message); }
inline void warn(const std::string& message) { write(Level::Warn, message); }

// The logger main() sets up: `name: message` lines on stderr, coloured on a terminal, from `level`
// on (trace, debug, info, warn, error, critical, off).
void setup(const std::string& level);

}  // namespace dbform::log
