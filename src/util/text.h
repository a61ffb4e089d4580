#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace dbform {

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible typo (distance greater than a third of the word's length, at least 2).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

size_t edit_distance(std::string_view a, std::string_view b);

std::string join(const std::vector<std::string>& items, std::string_view sep);

// "DBFORM_API_KEY_" + id upper-cased with every character outside A-Z0-9 turned into '_'.
std::string project_key_variable(std::string_view project_id);

}  // namespace dbform
