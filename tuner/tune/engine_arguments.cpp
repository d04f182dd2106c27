#include "tuner/tune/engine_arguments.h"

#include <unistd.h>

#include <filesystem>
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
