// The floors of `dbform plan`, measured by bench/plan_bench.py in the same run: what yaml-cpp alone
// takes to load the manifests, and nlohmann alone to parse the state, in a process of their own.
//
//   parse_floor yaml FILE...        loads each file with YAML::LoadFile, dropping it before the next
//   parse_floor yaml-held FILE...   the same, keeping every file's nodes (the whole manifest)
//   parse_floor json FILE      parses the file with nlohmann::json::parse
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[1] : "";
  size_t nodes = 0;
  if (mode == "yaml") {
    for (int i = 2; i < argc; ++i) nodes += YAML::LoadFile(argv[i]).size();
  } else if (mode == "yaml-held") {
    std::vector<YAML::Node> manifest;
    for (int i = 2; i < argc; ++i) nodes += manifest.emplace_back(YAML::LoadFile(argv[i])).size();
  } else if (mode == "json" && argc == 3) {
    std::ifstream in(argv[2], std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    nodes = nlohmann::json::parse(text).size();
  } else {
    std::cerr << "usage: parse_floor yaml|yaml-held FILE... | parse_floor json FILE\n";
    return 2;
  }
  return nodes > 0 ? 0 : 1;
}
