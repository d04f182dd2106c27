// Helpers shared by the tests: a scratch folder removed at the end of a test,
// a scoped environment variable, where the sample kernels live, the error a
// call throws, and a run of the ktune executable.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "ktune/error.h"

#ifndef KTUNE_TESTS_DIR
#define KTUNE_TESTS_DIR "tests"
#endif

namespace ktune::testing {

inline std::filesystem::path kernels_dir() { return std::filesystem::path(KTUNE_TESTS_DIR) / "data" / "kernels"; }

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("ktune-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    // A test may have made the folder read-only; removal needs it writable.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// The error `f` throws; a test failure when it throws none.
inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error thrown";
  return Error::failed("none");
}

#ifdef KTUNE_BINARY
// What a run of the ktune executable printed, and its exit status (-1: it
// did not exit normally).
struct Ran {
  int status = -1;
  std::string out;
};

// Runs the ktune executable with `args` (a shell-quoted string): stdout
// captured, stderr merged into it when asked, else dropped.
inline Ran run_ktune(const std::string& args, bool merge_stderr) {
  const std::string cmd = std::string(KTUNE_BINARY) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Ran r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}
#endif

}  // namespace ktune::testing
