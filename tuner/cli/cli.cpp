// The command line as one call (entry.h: run_command_line registers every
// command and runs the one named), and what tuner/cli/cli.h shares between
// the commands: the results database's path, duration options, Ctrl-C.
#include <signal.h>

#include <CLI/CLI.hpp>

#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "db/store.h"
#include "ktune/error.h"
#include "tuner/build/config_text.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/entry.h"
#include "tuner/spec/spec.h"

namespace ktune::cli {

std::string ResultsOptions::resolved_db() const {
  if (!db.empty()) return db;
  if (const char* env = std::getenv("KTUNE_DB"); env && *env) return env;
  return "ktune.db";
}

namespace {

Cancel g_ctrl_c;
volatile std::sig_atomic_t g_signal = 0;  // the last interrupting signal caught

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

extern "C" void ktune_on_interrupt(int sig) {
  g_signal = sig;
  g_ctrl_c.request();
}

CatchInterrupt::CatchInterrupt() {
  g_ctrl_c.clear();
  g_signal = 0;
  previous_int_ = std::signal(SIGINT, ktune_on_interrupt);
  previous_term_ = std::signal(SIGTERM, ktune_on_interrupt);
  // One that came while a parent held it blocked is handled now, not never.
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &both, nullptr);
}

CatchInterrupt::~CatchInterrupt() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
}

const Cancel& ctrl_c() { return g_ctrl_c; }

int interrupted_status() { return 128 + (g_signal == SIGTERM ? SIGTERM : SIGINT); }

void rethrow_for_command_line(const Error& e, std::string_view subject, std::string_view option,
                              std::string_view hint) {
  std::string message = e.message();
  if (!subject.empty()) {
    if (!message.starts_with(subject) || message.compare(subject.size(), 2, ": ") != 0) throw;
    message.erase(0, subject.size() + 2);
  }
  if (!option.empty()) message.insert(0, std::string(option) + ": ");
  throw Error(e.kind(), message.append(hint), e.where());
}

ConstantOverrides set_option(const std::vector<std::string>& items) {
  return as_option("--set", "", [&] { return parse_constant_overrides(items); });
}

std::vector<Value> config_option(const Spec& spec, const std::string& text) {
  return as_option("--config", "configuration", [&] { return parse_config_option(spec, text); });
}

db::Store open_results_db(const std::string& path) {
  try {
    return db::Store(path);
  } catch (const Error& e) {
    if (e.kind() != Error::Kind::BadInput) throw;
    throw Error(e.kind(), e.message() + ": choose another file with --db", e.where());
  }
}

std::string resolved_device(db::Store& store, const std::string& name) {
  if (name.empty()) return name;
  std::vector<std::string> matches;
  for (const db::DeviceRow& d : store.devices()) {
    if (d.info.name == name) return name;
    if (lower(d.info.name).find(lower(name)) != std::string::npos) matches.push_back(d.info.name);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.size() > 1) {
    std::string list;
    for (const std::string& m : matches) list.append(list.empty() ? "" : "; ").append(m);
    throw Error::bad_input("--device '" + name + "' matches " + std::to_string(matches.size()) + " devices: " + list +
                           " (give more of the name)");
  }
  return name;
}

db::ProblemSize problem_size_option(const std::string& text) {
  db::ProblemSize ps;
  std::string s = text;
  for (char& c : s)
    if (c == 'x' || c == '[' || c == ']' || c == ' ') c = ',';
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    if (comma > pos) {
      try {
        size_t used = 0;
        ps.push_back(std::stoll(s.substr(pos, comma - pos), &used));
        if (used != comma - pos) throw std::invalid_argument("trailing text");
      } catch (const std::exception&) {
        throw Error::bad_input("--problem-size: expected integers, got '" + text + "'");
      }
    }
    pos = comma + 1;
  }
  return db::canonical_problem_size(ps);
}

void refuse_negative_counts(CLI::App& app) {
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name() == "UINT")
      o->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const size_t first = text.find_first_not_of(" \t");
            if (first != std::string::npos && text[first] == '-') return "a count, at least 0, not " + text;
            return {};
          },
          "", "count"));
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_counts(*sub);
}

double duration_option(const std::string& option, const std::string& text) {
  if (auto seconds = parse_duration(text)) return *seconds;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == 0 && v > 0 && v <= kMaxDurationS) return v;
  throw Error::bad_input(option + ": '" + text + "' is not a duration of at most 365 days (e.g. 90, 90s, 10m, 1.5h)");
}

}  // namespace ktune::cli

namespace ktune::cli {

int run_command_line(int argc, char** argv) {
  CLI::App app{"ktune: a CUDA kernel autotuner (NVRTC, SQLite, Kernel Tuner formats)", "ktune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KTUNE_VERSION);
  CommandResult result;
  add_space_command(app, result);
  add_compile_command(app, result);
  add_tune_command(app, result);
  add_run_command(app, result);
  add_query_commands(app, result);
  add_interop_commands(app, result);
  add_merge_command(app, result);
  add_devices_command(app, result);
  add_profile_command(app, result);
  add_strategies_command(app, result);
  add_compare_command(app, result);
  add_report_command(app, result);
  refuse_negative_counts(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage hint
    return 2;
  } catch (const ktune::Cancelled&) {  // Ctrl-C inside a command that has nothing to report
    std::fflush(stdout);
    std::cerr << "ktune: interrupted\n";
    return interrupted_status();
  } catch (const ktune::Error& e) {
    std::fflush(stdout);
    std::cerr << "ktune: " << e.what() << '\n';
    return e.exit_status();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "ktune: internal error: " << e.what() << '\n';
    return 1;
  }
  return result.exit_status;
}

}  // namespace ktune::cli
