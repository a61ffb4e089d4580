#include "util/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace dbform::log {

namespace {
spdlog::level::level_enum level_of(Level level) {
  switch (level) {
    case Level::Trace: return spdlog::level::trace;
    case Level::Debug: return spdlog::level::debug;
    case Level::Info: return spdlog::level::info;
    case Level::Warn: return spdlog::level::warn;
  }
  return spdlog::level::warn;
}
}  // namespace

bool enabled(Level level) { return spdlog::should_log(level_of(level)); }

void write(Level level, const std::string& message) { spdlog::log(level_of(level), std::string_view(message)); }

void setup(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("dbform");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level.empty() ? "warn" : level));
}

}  // namespace dbform::log
