// T1 JSON (formats.md section 2; BAT suite and Kernel Tuner) -> Spec.
//
// Accepted keys are those of the T1 schema plus what published BAT files carry
// (BenchmarkConfig, verification, Stream, Misc, MemType, ...). Keys that ktune
// cannot act on are accepted and listed in Spec::notes, never silently.
#include "tuner/spec_build.h"

namespace ktune::spec_detail {

namespace {

Value typed_value(const Value& v, const std::string& type, const std::string& param, const SourceLocation& where) {
  auto bad = [&]() -> Value {
    fail(where, "parameter '" + param + "' has Type " + type + " but the value " + v.repr() + " is not one");
  };
  if (type == "int" || type == "uint") {
    if (!v.is_int()) return bad();
    if (type == "uint" && v.as_int() < 0) return bad();
    return v;
  }
  if (type == "float") return v.is_number() && !v.is_bool() ? Value(v.as_float()) : bad();
  if (type == "bool") {
    if (v.is_bool()) return v;
    if (v.is_int() && (v.as_int() == 0 || v.as_int() == 1)) return Value(v.as_int() == 1);
    return bad();
  }
  return v.is_string() ? v : bad();  // "string"
}

void read_parameter(const Doc& p, Draft& draft) {
  need_map(p, "a TuningParameters entry");
  check_keys(p, {"Name", "Type", "Values", "Default"}, "a TuningParameters entry");
  const Doc& name_doc = required(p, "Name", "a TuningParameters entry");
  const std::string& name = need_string(name_doc, "Name");
  require_identifier(name, name_doc.where, "parameter");
  const Doc& type_doc = required(p, "Type", "parameter '" + name + "'");
  const std::string& type = need_string(type_doc, "Type");
  if (type != "int" && type != "uint" && type != "float" && type != "bool" && type != "string")
    fail(type_doc.where, "Type '" + type + "' is not one of int, uint, float, bool, string");
  const Doc& values_doc = required(p, "Values", "parameter '" + name + "'");
  std::vector<Value> values;
  if (values_doc.is_list()) {
    for (const Doc& item : values_doc.items) values.push_back(typed_value(need_scalar(item, "a value"), type, name, item.where));
  } else {
    Value v = eval_constant(need_expression(values_doc, "Values of " + name), draft.spec);
    if (!v.is_list()) fail(values_doc.where, "Values of '" + name + "' must give a list, not " + v.repr());
    for (const Value& item : v.as_list()) values.push_back(typed_value(item, type, name, values_doc.where));
  }
  if (const Doc* def = p.find("Default")) need_scalar(*def, "Default");  // KTT's single-run value; not a restriction
  draft.params.push_back(make_parameter(name, std::move(values), name_doc.where, values_doc.where));
  draft.param_name_where.push_back(name_doc.where);
}

void read_condition(const Doc& c, Draft& draft) {
  need_map(c, "a Conditions entry");
  check_keys(c, {"Expression", "Parameters"}, "a Conditions entry");
  const Doc& e = required(c, "Expression", "a Conditions entry");
  draft.spec.restrictions.push_back(need_expression(e, "Expression"));
  if (const Doc* ps = c.find("Parameters")) {
    for (const Doc& n : need_list(*ps, "Parameters").items) {
      bool known = false;
      for (const auto& p : draft.params) known = known || p.name == need_string(n, "a Parameters entry");
      if (!known) fail(n.where, "Conditions name the unknown parameter '" + n.str() + "'");
    }
  }
}

void read_configuration_space(const Doc& d, Draft& draft) {
  need_map(d, "ConfigurationSpace");
  check_keys(d, {"TuningParameters", "Conditions"}, "ConfigurationSpace");
  for (const Doc& p : need_list(required(d, "TuningParameters", "ConfigurationSpace"), "TuningParameters").items)
    read_parameter(p, draft);
  if (const Doc* c = d.find("Conditions"))
    for (const Doc& cond : need_list(*c, "Conditions").items) read_condition(cond, draft);
}

// BAT's runner passes every BenchmarkConfig entry as -D and evaluates sizes
// with them in scope: ktune makes them constants and fixed defines.
void read_benchmark_config(const Doc& d, Draft& draft) {
  for (const auto& m : need_map(d, "BenchmarkConfig").members) {
    require_identifier(m.key, m.key_where, "BenchmarkConfig entry");
    Value v = constant_value(draft, m.key, need_scalar(m.value, "BenchmarkConfig." + m.key));
    draft.spec.constants.emplace_back(m.key, v);
    draft.spec.fixed_defines.emplace_back(m.key, v);
  }
}

// A BenchmarkConfig entry that is also a tunable parameter: the parameter wins,
// as in BAT (the tuning configuration is applied last).
void drop_shadowed_constants(Draft& draft) {
  auto shadowed = [&](const std::string& n) {
    for (const auto& p : draft.params)
      if (p.name == n) return true;
    return false;
  };
  auto& c = draft.spec.constants;
  for (auto it = c.begin(); it != c.end();) {
    if (!shadowed(it->first)) {
      ++it;
      continue;
    }
    draft.spec.notes.push_back("BenchmarkConfig." + it->first + " is also a tuning parameter; the parameter is used");
    it = c.erase(it);
  }
  auto& f = draft.spec.fixed_defines;
  std::erase_if(f, [&](const auto& kv) { return shadowed(kv.first); });
}

std::string strategy_name(const std::string& t1) {
  static const std::pair<std::string_view, std::string_view> names[] = {
      {"Random", "random_sample"},          {"RandomSearch", "random_sample"},
      {"RandomSearcher", "random_sample"},  {"Exhaustive", "brute_force"},
      {"BruteForce", "brute_force"},        {"Deterministic", "brute_force"},
      {"Annealing", "simulated_annealing"}, {"SimulatedAnnealing", "simulated_annealing"},
      {"AnnealingSearcher", "simulated_annealing"}, {"MCMC", "simulated_annealing"},
      {"GeneticAlgorithm", "genetic_algorithm"},   {"ParticleSwarm", "pso"}};
  for (const auto& [from, to] : names)
    if (from == t1) return std::string(to);
  return t1;  // the strategy registry rejects a name it does not know
}

Value attribute_value(const Doc& d) {
  if (!d.is_string()) return need_scalar(d, "an Attributes Value");
  const std::string& s = d.str();
  char* end = nullptr;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == 0) return Value(int64_t{i});
  double f = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == 0) return Value(f);
  return d.scalar;
}

void read_search(const Doc& d, Draft& draft) {
  need_map(d, "Search");
  check_keys(d, {"Name", "Attributes"}, "Search");
  StrategySpec& st = draft.spec.strategy;
  st.where = d.where;
  st.name = strategy_name(need_string(required(d, "Name", "Search"), "Search.Name"));
  if (const Doc* attrs = d.find("Attributes")) {
    for (const Doc& a : need_list(*attrs, "Attributes").items) {
      need_map(a, "an Attributes entry");
      check_keys(a, {"Name", "Value"}, "an Attributes entry");
      std::string n = need_string(required(a, "Name", "an Attributes entry"), "Attributes Name");
      st.options[n] = attribute_value(required(a, "Value", "an Attributes entry"));
    }
  }
}

void read_budget_entry(const Doc& b, Draft& draft) {
  need_map(b, "a Budget entry");
  check_keys(b, {"Type", "BudgetValue"}, "a Budget entry");
  const Doc& type = required(b, "Type", "a Budget entry");
  const Doc& value = required(b, "BudgetValue", "a Budget entry");
  StrategySpec& st = draft.spec.strategy;
  const std::string& t = need_string(type, "Budget Type");
  if (t == "ConfigurationCount") {
    int64_t n = need_int(value, "BudgetValue");
    if (n < 1) fail(value.where, "a ConfigurationCount budget must be at least 1");
    st.max_fevals = uint64_t(n);
  } else if (t == "TuningDuration") {
    st.time_limit_s = need_duration(value, "BudgetValue");
  } else if (t == "ConfigurationFraction") {
    double f = need_number(value, "BudgetValue");
    if (!(f > 0 && f <= 1)) fail(value.where, "a ConfigurationFraction budget must be in (0, 1]");
    st.max_fraction = f;
  } else {
    fail(type.where, "Budget Type '" + t + "' is not TuningDuration, ConfigurationCount or ConfigurationFraction");
  }
}

void read_general(const Doc& d) {
  need_map(d, "General");
  check_keys(d, {"BenchmarkName", "FormatVersion", "OutputFormat", "TimeUnit", "OutputFile", "LoggingLevel"},
             "General");
}

}  // namespace

void read_t1_spec(const Doc& root, Draft& draft) {
  check_keys(root,
             {"General", "ConfigurationSpace", "KernelSpecification", "Search", "Budget", "BenchmarkConfig",
              "verification"},
             "the T1 file");
  if (const Doc* g = root.find("General")) read_general(*g);
  if (const Doc* b = root.find("BenchmarkConfig")) read_benchmark_config(*b, draft);
  read_configuration_space(required(root, "ConfigurationSpace", "the T1 file"), draft);
  drop_shadowed_constants(draft);
  read_t1_kernel(required(root, "KernelSpecification", "the T1 file"), draft);
  if (const Doc* s = root.find("Search")) read_search(*s, draft);
  if (const Doc* b = root.find("Budget")) {
    if (b->is_map()) read_budget_entry(*b, draft);  // published BAT files also write a single object
    else for (const Doc& e : need_list(*b, "Budget").items) read_budget_entry(e, draft);
  }
  if (root.find("verification"))
    draft.spec.notes.push_back("'verification' (a CPU reference program) is not supported; outputs are not verified");
}

}  // namespace ktune::spec_detail
