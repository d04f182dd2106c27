#include "tuner/cli/print/profile.h"

#include "db/roofline.h"
#include "tuner/cli/print/json.h"
#include "tuner/cli/print/table.h"

namespace ktune::cli {

namespace {

std::string ratio(const std::optional<double>& num, const std::optional<double>& den) {
  if (!num || !den || !(*den > 0)) return "-";
  return fixed(*num / *den, 2);
}
std::string percent(const std::optional<double>& v) { return v ? fixed(*v * 100, 1) : "-"; }

Json opt_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

std::string roofline_text(const std::optional<db::Roofline>& r) {
  if (!r) return "-";
  if (r->of_roof) return r->bound + " " + fixed(*r->of_roof * 100, 1) + "%";
  return fixed(r->dram_gbs, 0) + " GB/s";
}

Json profile_json(const Spec& spec, const db::DeviceInfo& device, const std::vector<tune::ProfiledRow>& rows) {
  const auto& params = spec.space().parameters();
  {
    Json j = {{"device", device.name},
              {"limits", {{"copy_gbs", device.copy_gbs}, {"fp32_gflops", device.fp32_gflops}}},
              {"profiled", Json::array()}};
    for (const tune::ProfiledRow& r : rows) {
      Json config = Json::object();
      for (size_t i = 0; i < params.size() && i < r.eval.config.size(); ++i)
        config[params[i].name] = to_json(r.eval.config[i]);
      Json counters = Json::object();
      for (const db::EvaluationField& f : db::evaluation_fields())
        if (f.kind == db::EvaluationField::Kind::Counter) counters[f.column] = opt_json(f.get(r.eval));
      Json row = {{"evaluation_id", r.evaluation_id}, {"config", config}, {"time_ms", opt_json(r.eval.time_ms)},
                  {"occupancy", opt_json(r.eval.occupancy)}, {"counters", counters},
                  {"metrics", r.eval.metrics}, {"profile_s", r.cost_s}};
      if (const auto roof = db::roofline(r.eval, device)) row["roofline"] = roofline_json(*roof);
      if (!r.note.empty()) row["note"] = r.note;
      j["profiled"].push_back(row);
    }
    return j;
  }
}

void print_profile(const Spec& spec, const db::DeviceInfo& device, const std::vector<tune::ProfiledRow>& rows,
                   bool json, std::ostream& out) {
  if (json) {
    out << profile_json(spec, device, rows).dump(2) << '\n';
    return;
  }
  out << device.name << ": copy " << fixed(device.copy_gbs, 0) << " GB/s, FP32 " << fixed(device.fp32_gflops, 0)
      << " GFLOP/s (measured roofs)\n";
  std::vector<std::string> header = {"config", "time ms", "DRAM GB/s", "DRAM util %", "L2 hit %", "ld sect/req",
                                     "st sect/req", "occ ach/theo", "SM %", "tensor %", "FLOP/B", "bound", "of roof %"};
  for (const Metric& m : spec.metrics) header.push_back(m.name);
  Table t(header);
  for (const tune::ProfiledRow& r : rows) {
    const db::Evaluation& e = r.eval;
    const auto roof = db::roofline(e, device);
    std::vector<std::string> row = {
        config_key(e.config),
        e.time_ms ? fixed(*e.time_ms, 4) : "-",
        roof ? fixed(roof->dram_gbs, 0) : "-",
        percent(e.dram_util),
        percent(e.l2_hit_rate),
        ratio(e.load_sectors, e.load_requests),
        ratio(e.store_sectors, e.store_requests),
        (e.achieved_occupancy ? fixed(*e.achieved_occupancy, 2) : "-") + "/" + (e.occupancy ? fixed(*e.occupancy, 2) : "-"),
        percent(e.sm_util),
        percent(e.tensor_util),
        roof && roof->flop_per_byte ? fixed(*roof->flop_per_byte, 2) : "-",
        roof && !roof->bound.empty() ? roof->bound : "-",
        roof && roof->of_roof ? fixed(*roof->of_roof * 100, 1) : "-"};
    for (const Metric& m : spec.metrics) {
      auto it = e.metrics.find(m.name);
      row.push_back(it == e.metrics.end() ? "-" : fixed(it->second, 2));
    }
    t.add(std::move(row));
  }
  t.print(out);
}

}  // namespace ktune::cli
