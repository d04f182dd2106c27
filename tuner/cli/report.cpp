// `ktune report -o report.html`: the results database as one self-contained
// HTML page (tuner/cli/print/report_html.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "db/portability.h"
#include "db/result_set.h"
#include "db/store.h"
#include "ktune/error.h"
#include "tuner/cli/cli.h"
#include "tuner/cli/print/report_html.h"

namespace ktune::cli {
namespace {

struct ReportCmdOptions : ResultsOptions {
  std::string output;
  std::string devices;  // --devices a,b: parts of names
  std::string problem_size;
  bool include_replays = false;
  size_t top = 10;
};

int run_report(const ReportCmdOptions& o) {
  db::StoreOptions so;
  so.read_only = true;
  db::Store store(o.resolved_db(), so);
  db::Filter f;
  f.kernel = o.kernel;
  if (!o.include_replays) f.replayed = false;
  if (!o.problem_size.empty()) f.problem_size = problem_size_option(o.problem_size);
  store.require_known(f);
  std::vector<std::string> wanted;
  for (size_t at = 0; at <= o.devices.size();) {
    const size_t comma = std::min(o.devices.find(',', at), o.devices.size());
    if (comma > at) wanted.push_back(resolved_device(store, o.devices.substr(at, comma - at)));
    at = comma + 1;
  }
  std::vector<db::KernelSeries> kernels;
  for (db::KernelSeries& ks : db::load_series(store, f)) {
    if (!wanted.empty()) {
      std::vector<db::DeviceSeries> kept;
      for (const std::string& w : wanted)
        for (db::DeviceSeries& d : ks.devices)
          if (d.device == w || d.device == w + " (replay)") kept.push_back(std::move(d));
      ks.devices = std::move(kept);
    }
    if (!ks.devices.empty()) kernels.push_back(std::move(ks));
  }
  if (kernels.empty())
    throw Error::failed("no results to report in " + store.path() +
                        (o.include_replays ? std::string() : " (rows replays stored are left out: --include-replays)"));
  ReportOptions ro;
  ro.source = store.path();
  ro.top = o.top;
  const db::Roofs roofs(store);
  ro.roofs = &roofs;
  db::write_text_file(o.output, report_html(kernels, ro));
  size_t devices = 0;
  for (const db::KernelSeries& k : kernels) devices += k.devices.size();
  std::cout << "wrote " << o.output << ": " << kernels.size() << " kernel/problem-size series, " << devices
            << " device series\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<ReportCmdOptions>();
  CLI::App* sub = app.add_subcommand("report", "The results as one self-contained HTML page with plots");
  sub->add_option("-o,--output", o->output, "the HTML file to write")->required();
  sub->add_option("--db", o->db, "results database (default $KTUNE_DB, else ./ktune.db)");
  sub->add_option("--kernel", o->kernel, "only this kernel (default: every kernel)");
  sub->add_option("--devices,--device", o->devices, "only these devices (names or parts of names, comma-separated)");
  sub->add_option("--problem-size", o->problem_size, "only this problem size, e.g. 4096 or 4096,4096");
  sub->add_option("--top", o->top, "fastest configurations listed per device")->capture_default_str();
  sub->add_flag("--include-replays", o->include_replays,
                "also report rows replays stored (tune --simulate), as device 'NAME (replay)'");
  sub->callback([o, &result] { result.exit_status = run_report(*o); });
}

}  // namespace ktune::cli
