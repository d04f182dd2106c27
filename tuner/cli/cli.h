// The `ktune` command line: one add_*_command() per subcommand, each
// registering its options on a CLI11 app and a callback that runs it.
//
// Callbacks report bad input and failed work by throwing ktune::Error (main()
// prints it and exits with its status); a callback that completes sets the
// exit status through CommandResult (0, or 1 when the work ran but failed).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/record/record.h"
#include "ktune/error.h"
#include "search/expr/cancel.h"
#include "search/registry.h"
#include "tuner/spec/spec.h"

namespace CLI {
class App;
}
namespace ktune::db {
class Store;
}
namespace ktune {
class Profiler;
}

namespace ktune::cli {

struct CommandResult {
  int exit_status = 0;
};

// Options shared by the commands that touch results (README.md, "Commands").
struct ResultsOptions {
  std::string db;      // --db, else $KTUNE_DB, else ./ktune.db
  std::string kernel;  // --kernel
  std::string device;  // --device
  std::string arch;    // --arch sm_XX
  bool json = false;
  std::string resolved_db() const;
};

// The device `--device NAME` means in `store`: the name itself when a device
// has it, else the one device whose name contains it (case ignored: "H100",
// "rtx 3090"); several is bad input listing them; none returns `name` as given
// (the query then says it is unknown).
std::string resolved_device(db::Store& store, const std::string& name);

// `--problem-size 4096,4096` (also 4096x4096, [4096,4096]) as canonical
// extents; anything but integers is bad input.
db::ProblemSize problem_size_option(const std::string& text);

// Ctrl-C (SIGINT) and SIGTERM (Slurm's time limit, `kill`) for as long as
// this lives: the handler requests ctrl_c() instead of ending the process, so
// the command can stop cleanly with what it has done; the previous handlers
// come back after. Either signal, held blocked by whoever started this
// process, is unblocked. One at a time.
class CatchInterrupt {
 public:
  CatchInterrupt();
  ~CatchInterrupt();
  CatchInterrupt(const CatchInterrupt&) = delete;
  CatchInterrupt& operator=(const CatchInterrupt&) = delete;

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};
// Requested by Ctrl-C or SIGTERM while a CatchInterrupt lives (cleared when one starts).
const Cancel& ctrl_c();
// The exit status of a command that ctrl_c() stopped: 128 + the signal, 130
// for SIGINT, 143 for SIGTERM (as a shell reports a process the signal ended).
int interrupted_status();

// The library's errors speak of their inputs, not of options: an error about
// one input starts with its name and a colon ("objective: 'x' is neither
// ..."). as_option runs `f`; a ktune::Error it throws about `subject` (about
// anything, where `subject` is empty) is thrown again with `option`, the
// option that gives that input, in the subject's place ("--objective: 'x' is
// neither ..."). with_hint throws it again without the subject and with
// `hint` appended. Any other error passes unchanged.
[[noreturn]] void rethrow_for_command_line(const Error& e, std::string_view subject, std::string_view option,
                                           std::string_view hint);
template <class F>
decltype(auto) as_option(std::string_view option, std::string_view subject, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    rethrow_for_command_line(e, subject, option, "");
  }
}
template <class F>
decltype(auto) with_hint(std::string_view subject, std::string_view hint, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    rethrow_for_command_line(e, subject, "", hint);
  }
}

// `--set NAME=VALUE` items as constant overrides (spec.h), errors naming --set.
ConstantOverrides set_option(const std::vector<std::string>& items);
// `--config name=value,...` as the spec's values, errors naming --config.
std::vector<Value> config_option(const Spec& spec, const std::string& text);
// The results database of `--db` opened for writing; bad input about the
// file (read-only, no place for its -wal and -shm files, ...) asks for another.
db::Store open_results_db(const std::string& path);

// Seconds in a duration option's text: a unit (spec.h's parse_duration: 90s,
// 10m, 1.5h) or plain seconds, > 0. Anything else is bad input naming `option`.
double duration_option(const std::string& option, const std::string& text);

// A strategy as `tune --strategy` and `strategies compare --strategies` take
// it: "name" or "name:option=value:option=value" (values as --set reads
// them), ktune's or Kernel Tuner's names, resolved to ktune's (notes printed).
// `options` (a spec's strategy options) are overridden by those written here.
ResolvedStrategy strategy_option(const std::string& item,
                                 std::map<std::string, Value, std::less<>> options = {});

// The device `here` with its measured roofs (`ktune profile`, `tune
// --profile-top`): as stored in `store`, else measured by `profiler` (on
// that device) and stored; `again` measures anyway.
db::DeviceInfo profile_device_limits(const db::DeviceInfo& here, Profiler& profiler, db::Store& store, bool again);

// Every option of `app` and its subcommands that takes a count (an
// unsigned number) refuses a negative value, which would otherwise wrap
// around to a huge count (`--sample -3` compiling the whole space).
void refuse_negative_counts(CLI::App& app);

void add_space_command(CLI::App& app, CommandResult& result);
void add_compile_command(CLI::App& app, CommandResult& result);
void add_tune_command(CLI::App& app, CommandResult& result);
void add_query_commands(CLI::App& app, CommandResult& result);   // best, results
void add_interop_commands(CLI::App& app, CommandResult& result); // import, export
void add_merge_command(CLI::App& app, CommandResult& result);    // merge: databases into one
void add_devices_command(CLI::App& app, CommandResult& result);
void add_run_command(CLI::App& app, CommandResult& result);      // run: one configuration once, its outputs
void add_profile_command(CLI::App& app, CommandResult& result);
void add_strategies_command(CLI::App& app, CommandResult& result);
void add_compare_command(CLI::App& app, CommandResult& result);  // compare: portability across devices
void add_report_command(CLI::App& app, CommandResult& result);   // report: an HTML page of the results
// Hidden: the GPU worker entry used by the evaluation engine.

}  // namespace ktune::cli
