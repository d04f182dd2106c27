// `ktune merge A.db B.db ... --db OUT.db`: independent databases (a job
// array's tasks, several sites) folded into one (db/merge.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "db/merge.h"
#include "db/store.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/json.h"

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
  db::Store out(o.resolved_db());
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
