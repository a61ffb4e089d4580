// The target that makes the test executables' one precompiled header (Catch2, nlohmann/json and
// the standard headers the tests use): every test target reuses it (CMakeLists.txt).
