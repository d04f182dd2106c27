// The canonical form behind Spec::hash: a JSON document of everything that
// changes what a measurement means, independent of the file format it came
// from and of whitespace inside expressions. Strategy, budget, objective and
// metrics are left out on purpose (results stay valid when they change).
#include <nlohmann/json.hpp>

#include "tuner/spec/build.h"

namespace ktune::spec_detail {

namespace {

// Expression text without whitespace outside string literals.
std::string squeeze(const std::string& text) {
  std::string out;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out += c;
    }
  }
  return out;
}

nlohmann::ordered_json exprs(const std::vector<BoundExpr>& v) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& e : v) a.push_back(squeeze(e.expression.text()));
  return a;
}

nlohmann::ordered_json argument_json(const Argument& a) {
  nlohmann::ordered_json j;
  j["name"] = a.name;
  j["type"] = to_string(a.type);
  j["pointer"] = a.pointer;
  if (a.tensor_map) {
    const TensorMapArg& m = *a.tensor_map;
    j["tensor_map"] = {{"of", m.of}, {"dims", m.dims}, {"strides", m.strides}, {"box", m.box}, {"swizzle", m.swizzle}};
  } else if (!a.pointer) {
    j["value"] = a.value.repr();
  } else {
    j["size"] = a.size;
    j["fill"] = fill_kind_name(a.fill.kind);
    j["fill_value"] = a.fill.value.repr();
    if (a.fill.lo) j["lo"] = *a.fill.lo;
    if (a.fill.hi) j["hi"] = *a.fill.hi;
    if (a.fill.seed) j["seed"] = *a.fill.seed;
    j["start"] = a.fill.start;
    j["step"] = a.fill.step;
    if (a.fill.generator) j["generator"] = squeeze(a.fill.generator->text());
    j["path"] = a.fill.path;
    if (a.fill.kind == ArgFill::Kind::Normal) {
      j["mean"] = a.fill.mean;
      j["stddev"] = a.fill.stddev;
    }
    if (a.fill.kind == ArgFill::Kind::Copy) j["copy_of"] = a.fill.copy_of;
  }
  j["output"] = a.output;
  if (a.atol) j["atol"] = *a.atol;
  if (a.rtol) j["rtol"] = *a.rtol;
  j["read_write"] = a.read_write;
  j["constant_memory"] = a.constant_memory;
  return j;
}

}  // namespace

std::string canonical_text(const Spec& s) {
  nlohmann::ordered_json j;
  j["kernel"] = {{"name", s.kernel.name},
                 {"source_sha256", s.source_hash},
                 {"template_args", s.kernel.template_args},
                 {"compiler_options", s.kernel.compiler_options}};
  if (!s.kernel.archs.empty()) j["kernel"]["archs"] = s.kernel.archs_text();  // absent: older hashes unchanged
  if (s.kernel.compiler != "nvrtc") j["kernel"]["compiler"] = s.kernel.compiler;  // likewise
  nlohmann::ordered_json constants = nlohmann::ordered_json::array();
  for (const auto& [name, v] : s.constants) constants.push_back({name, v.repr()});
  j["constants"] = constants;
  j["problem_size"] = exprs(s.problem_size);
  j["grid_mode"] = int(s.grid_mode);
  j["grid_div"] = {exprs(s.grid_div[0]), exprs(s.grid_div[1]), exprs(s.grid_div[2])};
  j["grid"] = exprs(s.grid);
  j["global_size_in_threads"] = s.global_size_in_threads;
  j["block"] = exprs({s.block.begin(), s.block.end()});
  j["block_size_names"] = s.block_size_names;
  j["shared_memory"] = squeeze(s.shared_memory.expression.text());
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (const auto& p : s.space().parameters()) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const auto& v : p.values) values.push_back(v.repr());
    params.push_back({p.name, values});
  }
  j["parameters"] = params;
  nlohmann::ordered_json restrictions = nlohmann::ordered_json::array();
  for (const auto& r : s.restrictions) restrictions.push_back(squeeze(r.text()));
  j["restrictions"] = restrictions;
  nlohmann::ordered_json args = nlohmann::ordered_json::array();
  for (const auto& a : s.arguments) args.push_back(argument_json(a));
  j["arguments"] = args;
  j["verify"] = {{"mode", int(s.verify.mode)}, {"kernel", s.verify.kernel}, {"path", s.verify.path},
                 {"block", s.verify.block},    {"grid", s.verify.grid},     {"atol", s.verify.atol},
                 {"rtol", s.verify.rtol}};
  nlohmann::ordered_json defines = nlohmann::ordered_json::array();
  for (const auto& [name, v] : s.fixed_defines) defines.push_back({name, v.repr()});
  j["fixed_defines"] = defines;
  return j.dump();
}

}  // namespace ktune::spec_detail
