#include "tuner/tune/kernel_build.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>

#include "db/interchange/interchange.h"
#include "ktune/error.h"

namespace ktune {

namespace {

template <typename T>
void append(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A Generator fill is evaluated here, element by element, into a raw file the
// engine reads like any File fill (the engine knows no expressions).
std::string generate_file(const Argument& a) {
  std::string bytes;
  for (int64_t i = 0; i < a.size; ++i) {
    const Value index(i);
    const Value v = a.fill.generator_code.eval(std::span<const Value>(&index, 1));
    const double d = v.as_float();
    switch (a.type) {
      case ElemType::F32: append(bytes, static_cast<float>(d)); break;
      case ElemType::F64: append(bytes, d); break;
      case ElemType::I32: append(bytes, static_cast<int32_t>(v.as_int())); break;
      case ElemType::U32: append(bytes, static_cast<uint32_t>(v.as_int())); break;
      case ElemType::I64: append(bytes, static_cast<int64_t>(v.as_int())); break;
      default:
        throw Error::bad_input("argument '" + a.name + "': generator fills support float, double and 32/64-bit ints",
                               a.where);
    }
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("ktune-gen-" + std::to_string(getpid()) + "-" + a.name + ".bin");
  db::write_text_file(path.string(), bytes);
  return path.string();
}

// `spec`: where a copy finds the argument it copies. A copy of a random or
// randn fill takes that argument's seed, named or derived from its name.
gpu::Fill engine_fill(const Argument& a, const Spec& spec) {
  const ArgFill& f = a.fill;
  switch (f.kind) {
    case ArgFill::Kind::Copy:
      for (const Argument& src : spec.arguments)
        if (src.name == f.copy_of && src.fill.kind != ArgFill::Kind::Copy) {
          gpu::Fill c = engine_fill(src, spec);
          if (!c.seed) c.seed = gpu::random_seed(gpu::ArgSpec::buffer(src.name, src.type, 1, c));
          return c;
        }
      throw Error::bad_input("argument '" + a.name + "': fill: copy of '" + f.copy_of + "', which is not a buffer",
                             a.where);
    case ArgFill::Kind::Normal: return gpu::Fill::normal(f.seed, f.mean, f.stddev);
    case ArgFill::Kind::Zeros: return gpu::Fill::zeros();
    case ArgFill::Kind::Constant: return gpu::Fill::constant(f.value.as_float());
    case ArgFill::Kind::Sequence: return gpu::Fill::sequence(f.start, f.step);
    case ArgFill::Kind::File: return gpu::Fill::file(f.path);
    case ArgFill::Kind::Generator: return gpu::Fill::file(generate_file(a));
    case ArgFill::Kind::Random: {
      gpu::Fill r;
      r.kind = gpu::FillKind::Random;
      r.seed = f.seed;
      r.lo = f.lo;
      r.hi = f.hi;
      return r;
    }
  }
  return gpu::Fill::zeros();
}

}  // namespace

KernelBuild plan_build(const Spec& spec, const std::vector<Value>& config, const Arch& arch) {
  KernelBuild b{spec.geometry(config), std::nullopt};
  if (b.launch.ok()) b.request = make_compile_request(spec, config, *b.launch.launch, arch);
  return b;
}

CompileRequest make_compile_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                    const Arch& arch) {
  CompileRequest r;
  r.source = spec.kernel.source;
  r.source_path = spec.kernel.source_path;
  r.kernel_name = spec.kernel.name;
  r.template_args = spec.template_arguments(config);
  r.defines = spec.defines(config, launch);
  for (const std::string& opt : spec.kernel.compiler_options) {
    // The language standard has its own field so the default is not passed twice.
    if (opt.rfind("-std=", 0) == 0 || opt.rfind("--std=", 0) == 0) {
      r.std = opt.substr(opt.find('=') + 1);
    } else {
      r.options.push_back(opt);
    }
  }
  r.arch = arch;
  r.compiler = spec.kernel.compiler;
  r.block_threads = static_cast<int>(launch.block[0] * launch.block[1] * launch.block[2]);
  r.dynamic_smem = static_cast<std::size_t>(launch.shared_memory);
  return r;
}

CompileRequest make_reference_request(const Spec& spec, const std::vector<Value>& config, const Launch& launch,
                                      const Arch& arch) {
  CompileRequest r = make_compile_request(spec, config, launch, arch);
  r.kernel_name = spec.verify.kernel;
  r.template_args.clear();
  r.block_threads = static_cast<int>(spec.verify.block[0] * spec.verify.block[1] * spec.verify.block[2]);
  r.dynamic_smem = 0;
  return r;
}

static std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<Value> parse_config_option(const Spec& spec, const std::string& text) {
  const auto& params = spec.space().parameters();
  std::map<std::string, std::string> given;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error::bad_input("--config: expected name=value, got '" + item + "'");
    given[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
  }
  // A name that is no parameter first: a misspelt one is what is wrong, not
  // the parameter it leaves without a value.
  for (const auto& [name, value] : given) {
    if (std::any_of(params.begin(), params.end(), [&](const Parameter& p) { return p.name == name; })) continue;
    std::string listed;
    for (const Parameter& p : params) listed += (listed.empty() ? "" : ", ") + p.name;
    throw Error::bad_input("--config: unknown parameter '" + name + "'; the parameters: " + listed);
  }
  std::vector<Value> values;
  for (const Parameter& p : params) {
    auto it = given.find(p.name);
    if (it == given.end()) throw Error::bad_input("--config: no value for parameter '" + p.name + "'");
    const Value* match = nullptr;
    for (const Value& v : p.values)
      if (v.str() == it->second || v.repr() == it->second) match = &v;
    if (!match) {
      std::string listed;
      for (const Value& v : p.values) listed += (listed.empty() ? "" : ", ") + v.str();
      throw Error::bad_input("--config: " + p.name + "=" + it->second + " is not one of its values: " + listed);
    }
    values.push_back(*match);
    given.erase(it);
  }
  return values;
}

std::vector<gpu::ArgSpec> engine_arguments(const Spec& spec) {
  std::vector<gpu::ArgSpec> out;
  std::vector<std::pair<size_t, std::string>> maps;  // (index in out, buffer's name)
  for (const Argument& a : spec.arguments) {
    const ElemType t = a.type;
    if (a.constant_memory) {
      out.push_back(gpu::ArgSpec::constant(a.name, t, static_cast<uint64_t>(a.size), engine_fill(a, spec)));
      if (!a.passed_too) continue;
    }
    if (a.tensor_map) {
      gpu::MapLayout m;
      const uint64_t elem = elem_size(t);
      for (int64_t d : a.tensor_map->dims) m.dims.push_back(uint64_t(d));
      for (int64_t st : a.tensor_map->strides) m.stride_bytes.push_back(uint64_t(st) * elem);
      for (int64_t b : a.tensor_map->box) m.box.push_back(uint32_t(b));
      m.swizzle = uint32_t(a.tensor_map->swizzle);
      maps.emplace_back(out.size(), a.tensor_map->of);  // its buffer may come later
      out.push_back(gpu::ArgSpec::tensor_map(a.name, t, std::move(m)));
      continue;
    }
    if (!a.pointer) {
      out.push_back(is_float(a.type) ? gpu::ArgSpec::scalar(a.name, t, a.value.as_float())
                                               : gpu::ArgSpec::scalar_int(a.name, t, a.value.as_int()));
      continue;
    }
    gpu::ArgSpec s = gpu::ArgSpec::buffer(a.name, t, static_cast<uint64_t>(a.size), engine_fill(a, spec), a.output);
    s.read_write = a.read_write;
    out.push_back(std::move(s));
  }
  for (const auto& [at, of] : maps)
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].name == of && out[i].kind == gpu::ArgKind::Buffer) out[at].map.of = uint32_t(i);
  return out;
}

}  // namespace ktune
