// The state codec on any bytes: a plain or sealed document, or journal lines replayed onto one.
// Only StateError may come out; what parses must serialize and parse back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "state/codec.h"

using namespace dbform;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  // A key file's key: a passphrase would spend scrypt's cost on every input.
  static const StateCipher cipher(StateKey::raw(std::string(32, 'k'), "fuzz key"));
  try {
    if (data[0] % 2 == 0) {
      State state = parse_state(text, "fuzz.json", cipher);
      const std::string again = serialize_state(state);
      if (serialize_state(parse_state(again, "again.json")) != again) std::abort();
    } else {
      State state = new_state();
      state.lineage = "fuzz-lineage";
      size_t start = 0, line = 0;
      for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
        apply_journal_entry(state, text.substr(start, end - start), "line " + std::to_string(++line), cipher);
      serialize_state(state);
    }
  } catch (const StateError&) {
  }
  return 0;
}
