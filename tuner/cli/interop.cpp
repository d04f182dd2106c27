// `ktune import FILE`, `ktune export --format ... -o PATH` and `ktune merge`:
// results in and out of Kernel Tuner cache files and T4 files, out as
// deployment formats (C++ header, ktune JSON, Kernel Launcher wisdom;
// db/export/deploy.h), and independent databases (a job array's tasks,
// several sites) folded into one (db/merge.h).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "db/export/deploy.h"
#include "db/interchange/interchange.h"
#include "db/merge.h"
#include "db/store.h"
#include "ktune/error.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"

namespace ktune::cli {
namespace {

struct ImportOptions : ResultsOptions {
  std::vector<std::string> files;
};

struct ExportOptions : ResultsOptions {
  std::string format;
  std::string output;
  std::string header_namespace = "ktune_tuned";
  bool kernel_tuner_defines = false;
  bool include_replays = false;
};

int run_import(const ImportOptions& o) {
  db::Store store = open_results_db(o.resolved_db());
  db::ImportOptions io;
  io.device = o.device;
  io.kernel = o.kernel;
  io.ktune_version = KTUNE_VERSION;
  Json out = Json::array();
  for (const std::string& file : o.files) {
    const db::ImportSummary s = as_option("--kernel", "kernel", [&] {
      return as_option("--device", "device", [&] { return db::import_file(store, file, io); });
    });
    if (o.json) {
      out.push_back({{"file", file}, {"format", s.format}, {"kernel", s.kernel}, {"device", s.device},
                     {"run_id", s.run_id}, {"records", s.records}, {"inserted", s.inserted},
                     {"duplicates", s.duplicates}, {"truncated", s.truncated}, {"dropped", s.dropped}});
      continue;
    }
    std::cout << file << ": " << s.format << ", kernel " << s.kernel << " on " << s.device << ": " << s.inserted
              << " of " << s.records << " records imported";
    if (s.duplicates) std::cout << " (" << s.duplicates << " already stored)";
    std::cout << '\n';
    if (s.truncated)
      std::cout << "  note: an interrupted Kernel Tuner run, repaired; " << s.dropped << " partial record(s) dropped\n";
  }
  if (o.json) std::cout << out.dump(2) << '\n';
  return 0;
}

// Best configurations of every matching kernel, for deployment.
int run_deploy_export(const ExportOptions& o, db::DeployFormat format, db::Store& store, const db::Filter& f,
                      const std::string& path, std::ostream& say) {
  db::DeployOptions dopt;
  dopt.header_namespace = o.header_namespace;
  dopt.kernel_tuner_defines = o.kernel_tuner_defines;
  const db::DeploySummary s =
      as_option("--namespace", "namespace", [&] { return db::export_deploy(store, f, format, path, dopt); });
  if (o.json) {
    say << Json{{"path", o.output}, {"format", o.format}, {"kernels", s.kernels}, {"entries", s.entries},
                {"files", s.files}}.dump(2)
        << '\n';
  } else {
    say << "wrote the best of " << s.kernels << " kernel(s), " << s.entries << " device/problem-size entries ("
        << o.format << ")\n";
  }
  return 0;
}

// `-o -`: the file is written to a temporary path and copied to standard
// output, and what would be said about it goes to standard error.
class ToStdout {
 public:
  explicit ToStdout(const std::string& output) : on_(output == "-") {
    if (!on_) return;
    path_ = std::filesystem::temp_directory_path() / ("ktune-export-" + std::to_string(::getpid()));
  }
  ~ToStdout() {
    std::error_code ec;
    if (on_) std::filesystem::remove(path_, ec);
  }
  std::string path(const std::string& output) const { return on_ ? path_.string() : output; }
  std::ostream& say() const { return on_ ? std::cerr : std::cout; }
  // Read and removed before it is written out: a reader that closes the
  // pipe early (`| head`) then leaves no file behind.
  void copy() const {
    if (!on_) return;
    std::string text;
    {
      std::ifstream in(path_, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    std::cout << text;
    std::cout.flush();
  }

 private:
  bool on_;
  std::filesystem::path path_;
};

int run_export(const ExportOptions& o) {
  const auto deploy = db::deploy_format_from_string(o.format);
  const auto fmt = db::export_format_from_string(o.format);
  if (!deploy && !fmt)
    throw Error::bad_input("--format: '" + o.format + "' is not one of kernel-tuner, t4, header, json, wisdom");
  db::StoreOptions so;
  so.read_only = true;
  db::Store store(o.resolved_db(), so);
  db::Filter f;
  f.kernel = o.kernel;
  f.device = resolved_device(store, o.device);
  // A replay's rows were recorded elsewhere (tune --simulate): never shipped as
  // measurements; --include-replays exports them marked as replayed.
  if (!o.include_replays) {
    f.replayed = false;
    db::Filter any = f, replays = f;
    any.limit = replays.limit = 1;
    replays.replayed = true;
    if (store.results(any).empty() && !store.results(replays).empty())
      throw Error::bad_input("the matching results were all stored by replays (tune --simulate), which are not "
                             "measurements and are not exported; --include-replays exports them, marked");
  }
  if (o.output == "-" && o.format == "wisdom")
    throw Error::bad_input("-o -: wisdom is a directory of files, not one stream; name a directory");
  const ToStdout to(o.output);
  if (deploy) {
    const int status = run_deploy_export(o, *deploy, store, f, to.path(o.output), to.say());
    to.copy();
    return status;
  }
  store.require_known(f);
  const size_t n = db::export_file(store, f, *fmt, to.path(o.output));
  if (n == 0) {
    std::cerr << "ktune: no results to export for the given kernel/device\n";
    return 1;
  }
  to.copy();
  if (o.json) to.say() << Json{{"path", o.output}, {"format", o.format}, {"evaluations", n}}.dump(2) << '\n';
  else to.say() << "wrote " << n << " evaluations to " << (o.output == "-" ? "standard output" : o.output) << " ("
                << o.format << ")\n";
  return 0;
}

}  // namespace

void add_interop_commands(CLI::App& app, CommandResult& result) {
  auto i = std::make_shared<ImportOptions>();
  CLI::App* imp = app.add_subcommand("import", "Import Kernel Tuner cache files or T4 files into the database");
  imp->add_option("files", i->files, "Kernel Tuner cache (.json) or T4 files")->required();
  imp->add_option("--db", i->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  imp->add_option("--device", i->device, "device name (overrides the file's)");
  imp->add_option("--kernel", i->kernel, "kernel name (overrides the file's)");
  imp->add_flag("--json", i->json, "machine-readable output");
  imp->callback([i, &result] { result.exit_status = run_import(*i); });

  auto e = std::make_shared<ExportOptions>();
  CLI::App* exp = app.add_subcommand("export", "Export results (Kernel Tuner cache, T4) or the best configurations (C++ header, JSON, wisdom)");
  exp->add_option("--format", e->format, "kernel-tuner, t4, header, json or wisdom")->required();
  exp->add_option("-o,--output", e->output, "output file (for wisdom: a directory); - : standard output")->required();
  exp->add_option("--namespace", e->header_namespace, "header: the enclosing namespace (default ktune_tuned)");
  exp->add_flag("--kernel-tuner-defines", e->kernel_tuner_defines,
                "header: also write Kernel Tuner's #if defined(TARGET_<device>) #define blocks");
  exp->add_flag("--include-replays", e->include_replays,
                "also export rows a replay stored (tune --simulate), marked as replayed (device 'NAME (replay)' "
                "in kernel-tuner/t4, \"replay\": true in json and wisdom, a comment in the header)");
  exp->add_option("--db", e->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  exp->add_option("--kernel", e->kernel, "kernel name");
  exp->add_option("--device", e->device, "device name");
  exp->add_flag("--json", e->json, "machine-readable output");
  exp->callback([e, &result] { result.exit_status = run_export(*e); });
}

}  // namespace ktune::cli

namespace ktune::cli {
namespace {

struct MergeOptions : ResultsOptions {
  std::vector<std::string> inputs;
};

Json summary_json(const std::string& out, const db::MergeSummary& s) {
  Json inputs = Json::array();
  for (const db::MergeInputSummary& i : s.inputs)
    inputs.push_back({{"file", i.path}, {"runs", i.runs}, {"runs_added", i.runs_added},
                      {"evaluations", i.evaluations}, {"inserted", i.inserted}, {"duplicates", i.duplicates},
                      {"collapsed", i.collapsed}});
  Json conflicts = Json::array();
  for (const db::MergeConflict& c : s.conflicts)
    conflicts.push_back({{"kind", c.kind}, {"what", c.what}, {"detail", c.detail}});
  return {{"db", out}, {"merged", s.merged}, {"inserted", s.inserted()}, {"runs_added", s.runs_added()},
          {"inputs", inputs}, {"conflicts", conflicts}};
}

int run_merge(const MergeOptions& o) {
  db::Store out = open_results_db(o.resolved_db());
  const db::MergeSummary s = db::merge_databases(out, o.inputs);
  if (o.json) std::cout << summary_json(out.path(), s).dump(2) << '\n';
  if (!s.merged) {
    std::cerr << "ktune: merge refused, nothing written to " << out.path() << ": " << s.conflicts.size()
              << " conflict(s)\n";
    for (const db::MergeConflict& c : s.conflicts)
      std::cerr << "  " << c.kind << " " << c.what << ": " << c.detail << '\n';
    return 2;
  }
  if (o.json) return 0;
  for (const db::MergeInputSummary& i : s.inputs) {
    std::cout << i.path << ": " << i.inserted << " of " << i.evaluations << " evaluations merged, " << i.runs_added
              << " of " << i.runs << " runs new";
    if (i.duplicates) std::cout << "; " << i.duplicates << " already in " << out.path();
    if (i.collapsed) std::cout << "; " << i.collapsed << " earlier measurement(s) of a configuration in one run dropped";
    std::cout << '\n';
  }
  std::cout << "merged into " << out.path() << ": " << s.inserted() << " evaluations, " << s.runs_added()
            << " runs\n";
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* sub = app.add_subcommand("merge", "Merge ktune databases (job arrays, several sites) into one, with "
                                              "their runs and provenance");
  sub->add_option("inputs", o->inputs, "ktune databases to read (opened read-only)")->required();
  sub->add_option("--db", o->db, "the database merged into, created if absent (default $KTUNE_DB, else ./ktune.db)");
  sub->add_flag("--json", o->json, "machine-readable summary (with the conflicts, if any)");
  sub->callback([o, &result] { result.exit_status = run_merge(*o); });
}

}  // namespace ktune::cli
