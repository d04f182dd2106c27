// T1 JSON (BAT suite and Kernel Tuner; docs/spec.md, "T1 JSON files") -> Spec.
//
// Keys are matched through t1_map: those of Kernel Tuner's T1 schema, what
// published BAT files carry (BenchmarkConfig, verification, Stream, Misc,
// MemType, ...) and their other spellings. Keys that ktune cannot act on are
// accepted and listed in Spec::notes, never silently.
#include "tuner/spec/build.h"

#include <cctype>
#include <optional>
#include <unordered_set>

namespace ktune::spec_detail {

namespace {

// A value of a parameter's declared Type. Kernel Tuner evaluates Values as
// written whatever the Type says, and published files rely on it (the
// benchmark hub's simulated annealing hyper-parameter space declares `T` int
// with values 0.5 to 1.5): a number where another kind of number was declared
// is taken as written, with a note, once per parameter. A value of another
// kind (a string for an int) stays an error.
Value typed_value(const Value& v, const std::string& type, const std::string& param, const SourceLocation& where,
                  Draft& draft) {
  auto bad = [&]() -> Value {
    fail(where, "parameter '" + param + "' has Type " + type + " but the value " + v.repr() + " is not one");
  };
  if (type == "int" || type == "uint") {
    if (!v.is_number() || v.is_bool()) return bad();
    if (!v.is_int() || (type == "uint" && v.as_int() < 0)) {
      if (draft.t1_noted.insert("Type of " + param).second)
        draft.spec.notes.push_back(where.str() + ": parameter '" + param + "' has Type " + type + " but the value " +
                                   v.repr() + " is not one; its values are taken as written, as Kernel Tuner does");
    }
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

// The schema's Type, or a spelling published files use for it (int32, boolean, ...).
std::string parameter_type(const Doc& type_doc) {
  const std::string& t = need_string(type_doc, "Type");
  static const std::pair<std::string_view, std::string_view> types[] = {
      {"int", "int"},       {"int32", "int"},    {"int64", "int"},     {"integer", "int"}, {"uint", "uint"},
      {"uint32", "uint"},   {"uint64", "uint"},  {"float", "float"},   {"double", "float"}, {"float32", "float"},
      {"float64", "float"}, {"bool", "bool"},    {"boolean", "bool"},  {"string", "string"}, {"str", "string"}};
  for (const auto& [spelling, type] : types)
    if (t1_word_is(t, spelling)) return std::string(type);
  fail(type_doc.where, "Type '" + t + "' is not one of int, uint, float, bool, string");
}

void read_parameter(const Doc& entry, Draft& draft) {
  Doc p = t1_map(entry, {"Name", "Type", "Values", "Default"}, {}, "a TuningParameters entry", draft);
  const Doc& name_doc = required(p, "Name", "a TuningParameters entry");
  const std::string& name = need_string(name_doc, "Name");
  require_identifier(name, name_doc.where, "parameter");
  const Doc& type_doc = required(p, "Type", "parameter '" + name + "'");
  const std::string type = parameter_type(type_doc);
  std::vector<Value> values;
  const Doc* given = p.find("Values");
  if (!given && type == "bool") {  // a switch without Values (BAT's SPMV): both settings
    draft.spec.notes.push_back(p.where.str() + ": bool parameter '" + name + "' has no Values; tuned over False, True");
    draft.params.push_back(make_parameter(name, {Value(false), Value(true)}, name_doc.where, p.where));
    draft.param_name_where.push_back(name_doc.where);
    return;
  }
  const Doc& values_doc = given ? *given : required(p, "Values", "parameter '" + name + "'");
  if (values_doc.is_list()) {
    for (const Doc& item : values_doc.items) {
      values.push_back(typed_value(need_scalar(item, "a value"), type, name, item.where, draft));
      require_finite(values.back(), item.where, "a value of '" + name + "'");
    }
  } else {
    Value v = eval_constant(need_expression(values_doc, "Values of " + name), draft);
    if (!v.is_list()) fail(values_doc.where, "Values of '" + name + "' must give a list, not " + v.repr());
    for (const Value& item : v.as_list()) values.push_back(typed_value(item, type, name, values_doc.where, draft));
  }
  // Default (KTT's single-run value) is not a restriction and ktune does not use
  // it; published files put lists and prose there, so it is not checked either.
  draft.params.push_back(make_parameter(name, std::move(values), name_doc.where, values_doc.where));
  draft.param_name_where.push_back(name_doc.where);
}

void read_condition(const Doc& entry, Draft& draft, const std::unordered_set<std::string_view>& params) {
  if (entry.is_string()) {  // BAT's Constraints: the expression alone
    draft.spec.restrictions.push_back(need_expression(entry, "a Conditions entry"));
    return;
  }
  Doc c = t1_map(entry, {"Expression", "Parameters"}, {}, "a Conditions entry", draft);
  const Doc& e = required(c, "Expression", "a Conditions entry");
  draft.spec.restrictions.push_back(need_expression(e, "Expression"));
  if (const Doc* ps = c.find("Parameters")) {
    for (const Doc& n : need_list(*ps, "Parameters").items)
      if (!params.count(need_string(n, "a Parameters entry")))
        fail(n.where, "Conditions name the unknown parameter '" + n.str() + "'");
  }
}

void read_configuration_space(const Doc& section, Draft& draft) {
  Doc d = t1_map(section, {"TuningParameters", "Conditions"}, {{"Constraints", "Conditions"}}, "ConfigurationSpace",
                 draft);
  for (const Doc& p : need_list(required(d, "TuningParameters", "ConfigurationSpace"), "TuningParameters").items)
    read_parameter(p, draft);
  std::unordered_set<std::string_view> names;
  for (const auto& p : draft.params) names.insert(p.name);
  if (const Doc* c = d.find("Conditions"))
    for (const Doc& cond : need_list(*c, "Conditions").items) read_condition(cond, draft, names);
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

void read_search(const Doc& section, Draft& draft) {
  Doc d = t1_map(section, {"Name", "Attributes"}, {}, "Search", draft);
  StrategySpec& st = draft.spec.strategy;
  st.where = d.where;
  st.name = strategy_name(need_string(required(d, "Name", "Search"), "Search.Name"));
  if (const Doc* attrs = d.find("Attributes")) {
    for (const Doc& entry : need_list(*attrs, "Attributes").items) {
      Doc a = t1_map(entry, {"Name", "Value"}, {}, "an Attributes entry", draft);
      std::string n = need_string(required(a, "Name", "an Attributes entry"), "Attributes Name");
      st.options[n] = attribute_value(required(a, "Value", "an Attributes entry"));
    }
  }
}

void read_budget_entry(const Doc& entry, Draft& draft) {
  Doc b = t1_map(entry, {"Type", "BudgetValue"}, {}, "a Budget entry", draft);
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

std::string lowercase(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A throughput of the file's one problem size (GFLOPs, GB/s, ...): higher is
// shorter time, so time ranks the configurations as it would.
bool is_throughput(const std::string& objective) {
  const std::string s = lowercase(objective);
  for (std::string_view part : {"flop", "ops", "gb/s", "gbs", "bandwidth", "throughput"})
    if (s.find(part) != std::string::npos) return true;
  return s.size() > 2 && s.compare(s.size() - 2, 2, "/s") == 0;
}

// BAT's files say what to optimise: `Objective` with `Minimize`. From a T1
// file ktune measures time (and energy): time is itself, energy is ktune's
// energy objective, and a throughput is ranked by time, which orders the
// configurations of one problem size the same way (noted). Anything else, or
// a direction that contradicts the name (maximising time, minimising
// GFLOPs), would tune for what the file did not ask: refused.
void read_objective(const Doc& general, Draft& draft) {
  const Doc* objective = general.find("Objective");
  const Doc* minimize_doc = general.find("Minimize");
  std::optional<bool> minimize;
  if (minimize_doc) {
    if (minimize_doc->kind != Doc::Kind::Bool)
      fail(minimize_doc->where, "General.Minimize must be true or false, not " + std::string(kind_name(minimize_doc->kind)));
    minimize = minimize_doc->scalar.as_bool();
  }
  if (!objective) {
    if (minimize == false)
      fail(minimize_doc->where, "General.Minimize is false, but no Objective says what to maximise (ktune minimises "
                                "time); name the Objective or drop Minimize");
    return;
  }
  const std::string& name = need_string(*objective, "General.Objective");
  draft.objective_named = true;
  const std::string lower = lowercase(name);
  const SourceLocation& where = minimize_doc ? minimize_doc->where : objective->where;
  if (lower == "time" || lower == "energy") {
    if (minimize == false)
      fail(where, "General.Minimize is false for Objective '" + name + "': that would pick the " +
                      (lower == "time" ? "slowest" : "most energy-hungry") + " configuration");
    if (lower == "energy") draft.spec.objective = "energy";
    return;
  }
  if (is_throughput(name)) {
    if (minimize == true)
      fail(where, "General.Minimize is true for Objective '" + name + "', a throughput: that would pick the slowest "
                  "configuration");
    draft.spec.notes.push_back(objective->where.str() + ": Objective '" + name +
                               "' (higher is better) is ranked by time, which orders the configurations of one "
                               "problem size the same way");
    return;
  }
  fail(objective->where, "General.Objective '" + name +
                             "' is not something ktune measures from a T1 file (it measures time, energy, and "
                             "ranks a throughput such as GFLOPs by time); tuning time instead would answer another "
                             "question: drop the key, or write a YAML spec with a metric of that name");
}

void read_general(const Doc& d, Draft& draft) {
  const Doc g = t1_map(d, {"BenchmarkName", "FormatVersion", "OutputFormat", "TimeUnit", "OutputFile", "LoggingLevel",
                           "Objective", "Minimize"},
                       {}, "General", draft);
  read_objective(g, draft);
}

}  // namespace

void read_t1_spec(const Doc& file, Draft& draft) {
  Doc root = t1_map(file,
                    {"General", "ConfigurationSpace", "KernelSpecification", "Search", "Budget", "BenchmarkConfig",
                     "verification"},
                    {}, "the T1 file", draft);
  if (const Doc* g = root.find("General")) read_general(*g, draft);
  if (const Doc* b = root.find("BenchmarkConfig")) read_benchmark_config(*b, draft);
  read_configuration_space(required(root, "ConfigurationSpace", "the T1 file"), draft);
  drop_shadowed_constants(draft);
  if (const Doc* k = root.find("KernelSpecification")) read_t1_kernel(*k, draft);
  else no_t1_kernel(root, draft);
  if (const Doc* s = root.find("Search")) read_search(*s, draft);
  if (const Doc* b = root.find("Budget")) {
    if (b->is_map()) read_budget_entry(*b, draft);  // published BAT files also write a single object
    else for (const Doc& e : need_list(*b, "Budget").items) read_budget_entry(e, draft);
  }
  if (root.find("verification"))
    draft.spec.notes.push_back("'verification' (a CPU reference program) is not supported; outputs are not verified");
}

}  // namespace ktune::spec_detail
