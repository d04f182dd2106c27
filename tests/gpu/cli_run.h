// Running the ktune binary from a GPU test: paths found from the running test
// binary (build/tests/ktune_gpu_tests next to build/ktune), so the build
// folder can be carried to a GPU host and run from the repository root.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include <unistd.h>

#include "tuner/gpu/engine.h"

namespace ktune::gpu_test {

// Why this host cannot run a GPU test (no driver, no device); nullopt when it can.
// Use: if (auto why = no_gpu()) GTEST_SKIP() << *why;
inline std::optional<std::string> no_gpu() {
  const auto probe = gpu::probe_devices();
  if (probe.state == gpu::DriverState::Ready && !probe.devices.empty()) return std::nullopt;
  return probe.message;
}

inline std::filesystem::path build_dir() {
  return std::filesystem::canonical("/proc/self/exe").parent_path().parent_path();
}

inline std::filesystem::path tests_dir() {
  if (std::filesystem::exists(KTUNE_TESTS_DIR)) return KTUNE_TESTS_DIR;
  return std::filesystem::current_path() / "tests";
}

inline std::string ktune_binary() { return (build_dir() / "ktune").string(); }

// Everything the command wrote to stdout.
inline std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while (p && (n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  if (p) pclose(p);
  return out;
}

// A database for one test in the temp folder, removed first.
inline std::filesystem::path scratch_db(const std::string& test) {
  const auto db = std::filesystem::temp_directory_path() / ("ktune-" + test + "-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(db);
  return db;
}

// Runs `ktune tune <args> --json --db <db>` and returns its JSON summary;
// `output` gets everything it printed (stderr too: notes come before the
// JSON), for failure messages. Null when it printed no summary.
inline nlohmann::json tune_summary(const std::string& args, const std::filesystem::path& db, std::string& output) {
  output = run(ktune_binary() + " tune " + args + " --json --db " + db.string() + " 2>&1");
  const size_t brace = output.find("{\n");
  if (brace == std::string::npos) return nullptr;
  return nlohmann::json::parse(output.substr(brace));
}

}  // namespace ktune::gpu_test
