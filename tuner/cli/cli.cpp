// What tuner/cli/cli.h shares between the commands: the results database's
// path and duration options.
#include "tuner/cli/cli.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <csignal>
#include <cmath>
#include <cstdlib>

#include "db/store.h"
#include "ktune/error.h"
#include "tuner/spec/spec.h"

namespace ktune::cli {

std::string ResultsOptions::resolved_db() const {
  if (!db.empty()) return db;
  if (const char* env = std::getenv("KTUNE_DB"); env && *env) return env;
  return "ktune.db";
}

namespace {

Cancel g_ctrl_c;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

extern "C" void ktune_on_sigint(int) { g_ctrl_c.request(); }

CatchInterrupt::CatchInterrupt() {
  g_ctrl_c.clear();
  previous_ = std::signal(SIGINT, ktune_on_sigint);
}

CatchInterrupt::~CatchInterrupt() { std::signal(SIGINT, previous_); }

const Cancel& ctrl_c() { return g_ctrl_c; }

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
