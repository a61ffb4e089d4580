#pragma once
// Seeded randomness for the simulator. Only the raw 64-bit output of std::mt19937_64 is used
// (the standard pins it down exactly), never std::uniform_*_distribution (whose results differ
// between standard libraries), so a seed gives the same run everywhere.
#include <cstdint>
#include <random>
#include <string>

namespace dbform::sim {

class RandomSource {
 public:
  // `stream` separates independent sequences drawn from one seed, so that e.g. turning on an
  // error rate does not change the ids the services get.
  RandomSource(unsigned seed, unsigned stream) {
    std::seed_seq seq{seed, stream};
    rng_.seed(seq);
  }

  // Uniform in [0, 1).
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  // Uniform in [low, high] (the modulo bias is irrelevant at these ranges).
  long long between(long long low, long long high) {
    return low + static_cast<long long>(rng_() % static_cast<uint64_t>(high - low + 1));
  }

  std::string chars_from(const std::string& alphabet, size_t length) {
    std::string out;
    for (size_t i = 0; i < length; ++i) out += alphabet[rng_() % alphabet.size()];
    return out;
  }

  std::string lower_alnum(size_t length) { return chars_from("abcdefghijklmnopqrstuvwxyz0123456789", length); }
  std::string digits(size_t length) { return chars_from("0123456789", length); }

 private:
  std::mt19937_64 rng_;
};

}  // namespace dbform::sim
