// ktune's YAML spec (docs/spec.md) -> Spec. Sections are read in
// dependency order (constants, then parameters, then everything that may name
// them), whatever order the file lists them in.
#include "tuner/spec/build.h"

namespace ktune::spec_detail {

namespace {

void read_kernel(const Doc& d, Draft& draft) {
  need_map(d, "kernel");
  check_keys(d, {"name", "source", "template_args", "compiler_options", "archs", "compiler"}, "kernel");
  KernelSpec& k = draft.spec.kernel;
  k.where = d.where;
  const Doc& name = required(d, "name", "kernel");
  k.name = need_string(name, "kernel.name");
  require_identifier(k.name, name.where, "kernel name");
  const Doc& source = required(d, "source", "kernel");
  k.source_path = resolve_path(draft.spec.dir, need_string(source, "kernel.source"));
  if (file_for_gpu(k.source_path, source.where, "kernel source", draft))
    k.source = read_text_file(k.source_path, source.where, "kernel source");
  if (const Doc* t = d.find("template_args")) {
    k.template_args = need_string_list(*t, "kernel.template_args");
    k.where = t->where;
  }
  if (const Doc* o = d.find("compiler_options")) k.compiler_options = need_string_list(*o, "kernel.compiler_options");
  if (const Doc* c = d.find("compiler")) {
    k.compiler = need_string(*c, "kernel.compiler");
    if (k.compiler != "nvrtc" && k.compiler != "nvcc")
      fail(c->where, "kernel.compiler must be nvrtc (the default) or nvcc, not '" + k.compiler + "'");
    if (k.compiler == "nvcc" && d.find("template_args"))
      fail(c->where, "kernel.compiler nvcc takes the parameters as -D defines: leave template_args out");
  }
  if (const Doc* a = d.find("archs")) {
    if (!a->is_list() || a->items.empty()) fail(a->where, "kernel.archs must be a non-empty list such as [sm_90a]");
    for (const Doc& item : a->items) {
      const std::string text = need_string(item, "an entry of kernel.archs");
      try {
        k.archs.push_back(Arch::parse(text));
      } catch (const Error& e) {
        fail(item.where, e.message());
      }
    }
  }
}

void read_constants(const Doc& d, Draft& draft) {
  for (const auto& m : need_map(d, "constants").members) {
    require_identifier(m.key, m.key_where, "constant");
    Value v = m.value.is_string() ? eval_constant(need_expression(m.value, "constant " + m.key), draft)
                                  : need_scalar(m.value, "constant " + m.key);
    draft.spec.constants.emplace_back(m.key, constant_value(draft, m.key, std::move(v)));
  }
}

void read_tune_params(const Doc& d, Draft& draft) {
  for (const auto& m : need_map(d, "tune_params").members) {
    require_identifier(m.key, m.key_where, "parameter");
    std::vector<Value> values;
    if (m.value.is_list()) {
      for (const Doc& item : m.value.items) {
        values.push_back(need_scalar(item, "a value of '" + m.key + "'"));
        require_finite(values.back(), item.where, "a value of '" + m.key + "'");
      }
    } else if (m.value.is_string()) {
      Value v = eval_constant(need_expression(m.value, "values of " + m.key), draft);
      if (!v.is_list())
        fail(m.value.where, "values of '" + m.key + "' must be a list, but the expression gives " + v.repr());
      values = v.as_list();
    } else {
      fail(m.value.where, "values of '" + m.key + "' must be a list or an expression that yields one, not " +
                              std::string(kind_name(m.value.kind)));
    }
    draft.params.push_back(make_parameter(m.key, std::move(values), m.key_where, m.value.where));
    draft.param_name_where.push_back(m.key_where);
  }
}

std::vector<BoundExpr> expr_list(const Doc& d, std::string_view what, size_t max) {
  std::vector<BoundExpr> out;
  if (!d.is_list()) {
    out.push_back({need_expression(d, what), {}});
    return out;
  }
  if (d.items.empty() || d.items.size() > max)
    fail(d.where, std::string(what) + " needs 1 to " + std::to_string(max) + " entries, not " +
                      std::to_string(d.items.size()));
  for (const Doc& item : d.items) out.push_back({need_expression(item, what), {}});
  return out;
}

BoundExpr literal(const char* text) { return {expr::Expression::parse(text), {}}; }

bool is_param(const Draft& d, const std::string& name) {
  for (const auto& p : d.params)
    if (p.name == name) return true;
  return false;
}

void read_block(const Doc& root, Draft& draft) {
  Spec& s = draft.spec;
  s.block_size_names = {"block_size_x", "block_size_y", "block_size_z"};
  const Doc* names = root.find("block_size_names");
  if (names) {
    auto given = need_string_list(*names, "block_size_names");
    if (given.empty() || given.size() > 3) fail(names->where, "block_size_names needs 1 to 3 names");
    for (size_t i = 0; i < given.size(); ++i) s.block_size_names[i] = given[i];
  }
  auto constants = constant_map(s);
  for (size_t i = 0; i < 3; ++i) {
    const std::string& n = s.block_size_names[i];
    bool written = names && i < names->items.size();
    if (is_param(draft, n) || constants.count(n)) {
      s.block[i] = {expr::Expression::parse(n, written ? names->items[i].where : SourceLocation{}), {}};
    } else {
      // Kernel Tuner's rule: such a name is block dimension 1 (its CLBlast
      // GEMM examples name "block_size_z" so), with a warning.
      if (written)
        s.notes.push_back(names->items[i].where.str() + ": block size name '" + n +
                          "' is neither a tunable parameter nor a constant: block dimension " +
                          std::string(1, "xyz"[i]) + " is 1, as Kernel Tuner takes it");
      s.block[i] = literal("1");
    }
  }
}

void read_geometry(const Doc& root, Draft& draft) {
  Spec& s = draft.spec;
  read_block(root, draft);
  const Doc* grid = root.find("grid");
  const Doc* ps = root.find("problem_size");
  static const char* div_keys[] = {"grid_div_x", "grid_div_y", "grid_div_z"};
  if (ps) s.problem_size = expr_list(*ps, "problem_size", 3);
  if (grid) {
    for (const char* k : div_keys)
      if (root.find(k)) fail(root.key_location(k), std::string(k) + " and grid are alternatives; give one");
    s.grid_mode = GridMode::Explicit;
    s.grid = expr_list(*grid, "grid", 3);
    while (s.grid.size() < 3) s.grid.push_back(literal("1"));
    if (!ps) s.problem_size = {literal("1")};
  } else {
    if (!ps) fail(root.where, "the spec needs problem_size (with grid_div_*) or an explicit grid");
    s.grid_mode = GridMode::Divisors;
    for (size_t i = 0; i < 3; ++i) {
      if (const Doc* d = root.find(div_keys[i])) {
        if (!(d->is_list() && d->items.empty())) s.grid_div[i] = expr_list(*d, div_keys[i], 16);
      } else if (is_param(draft, s.block_size_names[i])) {
        // Kernel Tuner's default: divide by the block size along that axis.
        s.grid_div[i].push_back({expr::Expression::parse(s.block_size_names[i]), {}});
      }
    }
  }
  const Doc* smem = root.find("shared_memory");
  s.shared_memory = smem ? BoundExpr{need_expression(*smem, "shared_memory"), {}} : literal("0");
}

void read_restrictions(const Doc& d, Draft& draft) {
  for (const Doc& r : need_list(d, "restrictions").items)
    draft.spec.restrictions.push_back(need_expression(r, "a restriction"));
}

void read_metrics(const Doc& root, Draft& draft) {
  Spec& s = draft.spec;
  if (const Doc* m = root.find("metrics")) {
    for (const auto& member : need_map(*m, "metrics").members) {
      if (member.key == "time") fail(member.key_where, "'time' is the measured time, not a metric name");
      s.metrics.push_back(Metric{member.key, BoundExpr{need_expression(member.value, "metric " + member.key), {}}});
    }
  }
  if (const Doc* o = root.find("objective")) {
    s.objective = need_string(*o, "objective");
    draft.objective_where = o->where;
  }
  if (const Doc* h = root.find("higher_is_better")) {
    s.higher_is_better = need_bool(*h, "higher_is_better");
  } else if (const Doc* o = root.find("objective"); o && s.objective != "time" && s.objective != "energy") {
    // Kernel Tuner's default is to minimise: right for a cost, the slowest
    // first for a throughput (GB/s, TFLOP/s). Said, not guessed from the name.
    s.notes.push_back(o->where.str() + ": objective '" + s.objective +
                      "' is minimised (higher_is_better: false, Kernel Tuner's default); for a throughput such as "
                      "GB/s or TFLOP/s say higher_is_better: true, else higher_is_better: false to silence this note");
  }
}

// Kernel Tuner's tune_kernel(strategy_options={...}), under `strategy` or
// beside it: the named strategy's options, its max_fevals and time_limit the budget.
void read_strategy_options(const Doc& d, StrategySpec& st) {
  need_map(d, "strategy_options");
  if (st.name.empty()) fail(d.where, "strategy_options are a named strategy's options: name it (strategy: NAME)");
  for (const auto& o : d.members) {
    if (o.key == "max_fevals") {
      const int64_t n = need_int(o.value, "strategy_options.max_fevals");
      if (n < 1) fail(o.value.where, "strategy_options.max_fevals must be at least 1");
      st.max_fevals = uint64_t(n);
    } else if (o.key == "time_limit") {
      st.time_limit_s = need_duration(o.value, "strategy_options.time_limit");
    } else {
      st.options[o.key] = doc_to_value(o.value, "strategy_options." + o.key);
    }
  }
}

void read_strategy(const Doc& d, Draft& draft) {
  StrategySpec& st = draft.spec.strategy;
  st.where = d.where;
  if (d.is_string()) {
    st.name = d.str();
    return;
  }
  need_map(d, "strategy");
  // Without a name the budget and seed apply to the command's default strategy.
  if (const Doc* name = d.find("name")) st.name = need_string(*name, "strategy.name");
  for (const auto& m : d.members) {
    if (m.key == "name") continue;
    if (m.key == "max_fevals") {
      int64_t n = need_int(m.value, "strategy.max_fevals");
      if (n < 1) fail(m.value.where, "strategy.max_fevals must be at least 1");
      st.max_fevals = uint64_t(n);
    } else if (m.key == "time_limit") {
      st.time_limit_s = need_duration(m.value, "strategy.time_limit");
    } else if (m.key == "seed") {
      int64_t n = need_int(m.value, "strategy.seed");
      if (n < 0) fail(m.value.where, "strategy.seed must not be negative");
      st.seed = uint64_t(n);
    } else if (m.key == "strategy_options" && m.value.is_map()) {
      read_strategy_options(m.value, st);
    } else {
      // Options belong to one strategy: without its name they would silently
      // change meaning when the default does.
      if (st.name.empty()) fail(m.value.where, "strategy." + m.key + " is an option of a named strategy: add 'name'");
      st.options[m.key] = doc_to_value(m.value, "strategy." + m.key);
    }
  }
}

}  // namespace

void read_yaml_spec(const Doc& root, Draft& draft) {
  check_keys(root,
             {"kernel", "constants", "problem_size", "grid_div_x", "grid_div_y", "grid_div_z", "grid",
              "block_size_names", "shared_memory", "tune_params", "restrictions", "arguments", "verify", "metrics",
              "objective", "higher_is_better", "strategy", "strategy_options", "iterations"},
             "the spec");
  read_kernel(required(root, "kernel", "the spec"), draft);
  if (const Doc* c = root.find("constants")) read_constants(*c, draft);
  read_tune_params(required(root, "tune_params", "the spec"), draft);
  read_geometry(root, draft);
  if (const Doc* r = root.find("restrictions")) read_restrictions(*r, draft);
  if (const Doc* a = root.find("arguments")) read_yaml_arguments(*a, draft);
  if (const Doc* v = root.find("verify")) read_yaml_verify(*v, draft);
  require_verify_for_tolerances(draft);
  read_metrics(root, draft);
  if (const Doc* s = root.find("strategy")) read_strategy(*s, draft);
  if (const Doc* o = root.find("strategy_options")) read_strategy_options(*o, draft.spec.strategy);
  // Kernel Tuner's fixed number of timed runs; ktune samples adaptively.
  if (const Doc* i = root.find("iterations")) {
    need_int(*i, "iterations");
    draft.spec.notes.push_back(i->where.str() +
                               ": iterations is not used: ktune times each configuration until its samples agree "
                               "(at least 10, until their spread is under 2% or 200 ms of GPU time, the slow ones "
                               "stopped early by racing; docs/commands.md, Measurement)");
  }
}

}  // namespace ktune::spec_detail
