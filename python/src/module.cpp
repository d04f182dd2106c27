// ktune._ktune: the Python package's binding of ktune's libraries.
//
// - run_command_line: any `ktune` command, run in this process (what the
//   executable's main() runs), its standard output optionally captured;
// - spec_arguments: a spec's kernel arguments, as the spec loader reads them;
// - Launcher: ktune::Launcher (include/ktune/launcher.h) with its arguments
//   taken from Python: device arrays through DLPack (CuPy, JAX; PyTorch's
//   tensors through their own attributes, cheaper per launch), no copy, or
//   raw device pointers; scalars converted to the spec's types with
//   range checks; or host arrays, copied up, run, and copied back (run_host);
// - set_worker_program: the `ktune` executable that serves as compile child
//   and GPU worker (the interpreter cannot: tuner/base/worker_program.h).
// ktune::Error becomes ktune.Error (failed work) or ktune.BadInput (a
// ValueError too: bad input, as exit status 2 means on the command line).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ktune/error.h"
#include "ktune/launcher.h"
#include "tuner/base/elem_type.h"
#include "tuner/base/worker_program.h"
#include "tuner/cli/entry.h"
#include "tuner/gpu/driver.h"
#include "tuner/spec/spec.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

PyObject* error_type = nullptr;      // ktune.Error
PyObject* bad_input_type = nullptr;  // ktune.BadInput

std::pair<int, std::string> run_command_line(std::vector<std::string> args, bool capture) {
  args.insert(args.begin(), "ktune");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out;
  std::streambuf* previous = capture ? std::cout.rdbuf(out.rdbuf()) : nullptr;
  int status = 0;
  {
    nb::gil_scoped_release release;
    try {
      status = ktune::cli::run_command_line(static_cast<int>(args.size()), argv.data());
    } catch (...) {
      if (capture) std::cout.rdbuf(previous);
      throw;
    }
    std::cout.flush();
  }
  if (capture) std::cout.rdbuf(previous);
  return {status, out.str()};
}

// The kernel's parameters in order: a spec argument that only fills a
// __constant__ array is none.
std::vector<ktune::Argument> kernel_parameters(const ktune::Spec& spec) {
  std::vector<ktune::Argument> out;
  for (const ktune::Argument& a : spec.arguments)
    if (!a.constant_memory || a.passed_too) out.push_back(a);
  return out;
}

// The parameters a launch from Python passes: tensor maps are not built here.
std::vector<ktune::Argument> launch_parameters(const ktune::Spec& spec) {
  std::vector<ktune::Argument> out = kernel_parameters(spec);
  for (const ktune::Argument& a : out)
    if (a.tensor_map)
      throw ktune::Error::bad_input("argument '" + a.name + "' is a tensor_map: ktune.Kernel passes buffers and "
                                    "scalars only; tune and run such a kernel with `ktune tune` or `ktune run`");
  return out;
}

ktune::Spec load(const std::string& spec, const std::vector<std::pair<std::string, std::string>>& constants) {
  std::vector<std::string> items;
  for (const auto& [name, value] : constants) items.push_back(name + "=" + value);
  return ktune::load_spec(spec, ktune::parse_constant_overrides(items));
}

nb::list spec_arguments(const std::string& spec, const std::vector<std::pair<std::string, std::string>>& constants) {
  nb::list out;
  for (const ktune::Argument& a : kernel_parameters(load(spec, constants)))
  {
    nb::dict d;
    d["name"] = a.name;
    d["type"] = ktune::to_string(a.type);
    d["pointer"] = a.pointer;
    d["tensor_map"] = a.tensor_map.has_value();
    d["size"] = a.size;
    d["components"] = a.components;
    d["output"] = a.output;
    out.append(d);
  }
  return out;
}

// DLPack's (code, bits) of an element type.
std::pair<uint8_t, uint8_t> dlpack_code(ktune::ElemType t) {
  using ktune::ElemType;
  using C = nb::dlpack::dtype_code;
  const auto bits = static_cast<uint8_t>(8 * ktune::elem_size(t));
  switch (t) {
    case ElemType::F16: case ElemType::F32: case ElemType::F64: return {uint8_t(C::Float), bits};
    case ElemType::BF16: return {uint8_t(C::Bfloat), bits};
    case ElemType::I8: case ElemType::I16: case ElemType::I32: case ElemType::I64: return {uint8_t(C::Int), bits};
    default: return {uint8_t(C::UInt), bits};
  }
}

std::string dtype_text(nb::dlpack::dtype d) {
  static const char* names[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  return (d.code < 7 ? std::string(names[d.code]) : "code " + std::to_string(d.code)) + std::to_string(d.bits);
}

bool contiguous(const nb::ndarray<>& a) {
  int64_t expected = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

// An array for a buffer argument: its element type must be the argument's,
// and it must be contiguous; `device` says where it must live.
nb::ndarray<> checked_array(const ktune::Argument& a, size_t index, nb::handle value, bool device) {
  nb::ndarray<> arr;
  if (!nb::try_cast(value, arr))
    throw ktune::Error::bad_input("argument " + std::to_string(index) + " (" + a.name + ", " +
                                  ktune::to_string(a.type) + "*) must be an array (DLPack: PyTorch, CuPy, NumPy)" +
                                  (device ? " on the GPU or a device pointer (int)" : "") + ", not " +
                                  nb::cast<std::string>(nb::str(value.type())));
  const auto [code, bits] = dlpack_code(a.type);
  if (arr.dtype().code != code || arr.dtype().bits != bits || arr.dtype().lanes != 1)
    throw ktune::Error::bad_input("argument " + std::to_string(index) + " (" + a.name + ") is " +
                                  ktune::to_string(a.type) + "* in the spec, but the array holds " +
                                  dtype_text(arr.dtype()));
  if (!contiguous(arr))
    throw ktune::Error::bad_input("argument " + std::to_string(index) + " (" + a.name + ") is not contiguous");
  const bool on_gpu = arr.device_type() == nb::device::cuda::value;
  if (device && !on_gpu)
    throw ktune::Error::bad_input("argument " + std::to_string(index) + " (" + a.name +
                                  ") is not on the GPU (a host array: move it to the device first)");
  if (!device && arr.device_type() != nb::device::cpu::value)
    throw ktune::Error::bad_input("argument " + std::to_string(index) + " (" + a.name + ") must be a host array here");
  return arr;
}

// PyTorch's element type objects (torch.float32, ...) by ElemType, looked up
// once torch is imported; never released (they live as long as torch).
PyObject* torch_dtype(ktune::ElemType t) {
  static const char* names[] = {"float16", "bfloat16", "float32", "float64", "int8",   "int16",
                                "int32",   "int64",    "uint8",   "uint16",  "uint32", "uint64"};
  static PyObject* dtypes[std::size(names)] = {};
  const auto i = static_cast<size_t>(t);
  if (!dtypes[i]) {
    nb::object torch = nb::module_::import_("torch");
    if (nb::hasattr(torch, names[i])) dtypes[i] = nb::object(torch.attr(names[i])).release().ptr();
  }
  return dtypes[i];
}

// torch.Tensor where torch is imported, else null.
PyObject* torch_tensor_type() {
  static PyObject* type = nullptr;
  if (!type) {
    PyObject* modules = PyImport_GetModuleDict();
    PyObject* torch = PyDict_GetItemString(modules, "torch");  // borrowed
    if (torch && PyObject_HasAttrString(torch, "Tensor")) type = PyObject_GetAttrString(torch, "Tensor");
  }
  return type;
}

// A PyTorch tensor's device pointer, read through its own attributes, which
// costs less per launch than exporting it through DLPack; the same checks.
std::optional<CUdeviceptr> torch_pointer(const ktune::Argument& a, size_t index, nb::handle value) {
  PyObject* tensor = torch_tensor_type();
  if (!tensor || PyObject_IsInstance(value.ptr(), tensor) != 1) return std::nullopt;
  const std::string which = "argument " + std::to_string(index) + " (" + a.name + ")";
  if (nb::getattr(value, "dtype").ptr() != torch_dtype(a.type))
    throw ktune::Error::bad_input(which + " is " + ktune::to_string(a.type) + "* in the spec, but the tensor holds " +
                                  nb::cast<std::string>(nb::str(nb::getattr(value, "dtype"))));
  if (!nb::cast<bool>(nb::getattr(value, "is_cuda")))
    throw ktune::Error::bad_input(which + " is not on the GPU (a host array: move it to the device first)");
  if (!nb::cast<bool>(value.attr("is_contiguous")()))
    throw ktune::Error::bad_input(which + " is not contiguous");
  return static_cast<CUdeviceptr>(nb::cast<uintptr_t>(value.attr("data_ptr")()));
}

template <class T>
void put(std::vector<std::byte>& bytes, T v) {
  bytes.resize(sizeof v);
  std::memcpy(bytes.data(), &v, sizeof v);
}

template <class T>
void put_integer(std::vector<std::byte>& bytes, nb::handle value, const ktune::Argument& a) {
  if (!nb::isinstance<nb::int_>(value) && !PyIndex_Check(value.ptr()))
    throw ktune::Error::bad_input("argument " + a.name + " is " + ktune::to_string(a.type) + ": give an integer, not " +
                                  nb::cast<std::string>(nb::str(value.type())));
  nb::int_ i = nb::steal<nb::int_>(PyNumber_Index(value.ptr()));
  const nb::object low = nb::int_(std::numeric_limits<T>::min()), high = nb::int_(std::numeric_limits<T>::max());
  if (i < low || i > high)
    throw ktune::Error::bad_input("argument " + a.name + " (" + ktune::to_string(a.type) + ") cannot hold " +
                                  nb::cast<std::string>(nb::str(i)));
  if constexpr (std::is_signed_v<T>)
    put(bytes, static_cast<T>(nb::cast<int64_t>(i)));
  else
    put(bytes, static_cast<T>(nb::cast<uint64_t>(i)));
}

// A scalar argument's bytes, in the spec's type.
std::vector<std::byte> scalar_bytes(const ktune::Argument& a, nb::handle value) {
  using ktune::ElemType;
  std::vector<std::byte> bytes;
  switch (a.type) {
    case ElemType::I8: put_integer<int8_t>(bytes, value, a); break;
    case ElemType::I16: put_integer<int16_t>(bytes, value, a); break;
    case ElemType::I32: put_integer<int32_t>(bytes, value, a); break;
    case ElemType::I64: put_integer<int64_t>(bytes, value, a); break;
    case ElemType::U8: put_integer<uint8_t>(bytes, value, a); break;
    case ElemType::U16: put_integer<uint16_t>(bytes, value, a); break;
    case ElemType::U32: put_integer<uint32_t>(bytes, value, a); break;
    case ElemType::U64: put_integer<uint64_t>(bytes, value, a); break;
    case ElemType::F32: {
      const double d = nb::cast<double>(nb::float_(value));
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max())
        throw ktune::Error::bad_input("argument " + a.name + " (float) cannot hold " + std::to_string(d));
      put(bytes, static_cast<float>(d));
      break;
    }
    case ElemType::F64: put(bytes, nb::cast<double>(nb::float_(value))); break;
    default:
      throw ktune::Error::bad_input("argument " + a.name + ": a " + std::string(ktune::to_string(a.type)) +
                                    " scalar cannot be passed from Python");
  }
  return bytes;
}

ktune::Problem problem_of(const std::vector<std::pair<std::string, int64_t>>& problem) {
  return ktune::Problem(problem.begin(), problem.end());
}

nb::dict choice_dict(const ktune::Choice& c) {
  nb::dict config;
  for (const auto& [k, v] : c.config) config[nb::str(k.c_str())] = v;
  nb::dict d;
  d["config"] = config;
  d["match"] = c.match;
  d["source"] = c.source;
  d["device"] = c.device;
  d["compute_capability"] = c.compute_capability;
  d["grid"] = nb::make_tuple(c.grid[0], c.grid[1], c.grid[2]);
  d["block"] = nb::make_tuple(c.block[0], c.block[1], c.block[2]);
  d["shared_memory"] = c.shared_memory;
  d["compile_ms"] = c.compile_ms;
  d["cache_hit"] = c.cache_hit;
  d["text"] = c.str();
  return d;
}

// ktune::Launcher with Python arguments.
class PyLauncher {
 public:
  PyLauncher(const std::string& spec, const std::string& results, const std::string& kernel,
             const std::string& cache_dir, bool quiet)
      : launcher_(options(spec, results, kernel, cache_dir, quiet)), parameters_(launch_parameters(load(spec, {}))) {}

  nb::dict choose(const std::vector<std::pair<std::string, int64_t>>& problem, const std::string& device, int cc) {
    return choice_dict(launcher_.choose(problem_of(problem), device, cc));
  }

  nb::dict prepare(const std::vector<std::pair<std::string, int64_t>>& problem) {
    const ktune::Problem p = problem_of(problem);
    const ktune::Choice* c = nullptr;
    {
      nb::gil_scoped_release release;
      c = &launcher_.prepare(p);
    }
    return choice_dict(*c);
  }

  // Launches on `stream` with device arrays (or device pointers) and scalars.
  void launch(const std::vector<std::pair<std::string, int64_t>>& problem, uintptr_t stream, nb::sequence args) {
    check_count(args);
    std::vector<std::vector<std::byte>> scalars(parameters_.size());
    std::vector<CUdeviceptr> pointers(parameters_.size());
    std::vector<void*> slots(parameters_.size());
    std::vector<nb::ndarray<>> held;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      const ktune::Argument& a = parameters_[i];
      nb::handle value = args[i];
      if (!a.pointer) {
        scalars[i] = scalar_bytes(a, value);
        slots[i] = scalars[i].data();
      } else if (nb::isinstance<nb::int_>(value)) {
        pointers[i] = nb::cast<uintptr_t>(value);
        slots[i] = &pointers[i];
      } else if (auto p = torch_pointer(a, i, value)) {
        pointers[i] = *p;
        slots[i] = &pointers[i];
      } else {
        held.push_back(checked_array(a, i, value, true));
        pointers[i] = reinterpret_cast<CUdeviceptr>(held.back().data());
        slots[i] = &pointers[i];
      }
    }
    const ktune::Problem p = problem_of(problem);
    nb::gil_scoped_release release;
    launcher_.launch(p, reinterpret_cast<CUstream_st*>(stream), slots.data());
  }

  // Host arrays: copied to the GPU, launched once, waited for, and every
  // buffer copied back into a new array of the same shape (Kernel Tuner's
  // run_kernel). Scalars as launch() takes them.
  nb::list run_host(const std::vector<std::pair<std::string, int64_t>>& problem, nb::sequence args) {
    check_count(args);
    const ktune::Problem p = problem_of(problem);
    {
      nb::gil_scoped_release release;
      launcher_.prepare(p);  // makes a context current, as launch() will use
    }
    const ktune::gpu::DriverLoad& driver = ktune::gpu::cuda_driver();
    if (!driver.ready()) throw ktune::Error::failed("no CUDA driver: " + driver.message);
    const ktune::gpu::CudaApi& api = *driver.api;
    std::vector<std::vector<std::byte>> scalars(parameters_.size());
    std::vector<ktune::gpu::DeviceMemory> memory(parameters_.size());
    std::vector<CUdeviceptr> pointers(parameters_.size());
    std::vector<void*> slots(parameters_.size());
    std::vector<nb::ndarray<>> host(parameters_.size());
    for (size_t i = 0; i < parameters_.size(); ++i) {
      const ktune::Argument& a = parameters_[i];
      if (!a.pointer) {
        scalars[i] = scalar_bytes(a, args[i]);
        slots[i] = scalars[i].data();
        continue;
      }
      host[i] = checked_array(a, i, args[i], false);
      const size_t bytes = std::max<size_t>(host[i].nbytes(), 1);
      memory[i] = ktune::gpu::DeviceMemory(api, bytes);
      if (host[i].nbytes())
        ktune::gpu::check(api, api.cuMemcpyHtoD(memory[i].ptr(), host[i].data(), host[i].nbytes()), "cuMemcpyHtoD");
      pointers[i] = memory[i].ptr();
      slots[i] = &pointers[i];
    }
    {
      nb::gil_scoped_release release;
      launcher_.launch(p, nullptr, slots.data());
      ktune::gpu::check(api, api.cuCtxSynchronize(), "cuCtxSynchronize");
    }
    nb::module_ np = nb::module_::import_("numpy");
    nb::list out;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      if (!parameters_[i].pointer) {
        out.append(args[i]);
        continue;
      }
      nb::object copy = np.attr("array")(args[i], "copy"_a = true);
      nb::ndarray<> target = nb::cast<nb::ndarray<>>(copy);
      if (target.nbytes())
        ktune::gpu::check(api, api.cuMemcpyDtoH(target.data(), memory[i].ptr(), target.nbytes()), "cuMemcpyDtoH");
      out.append(copy);
    }
    return out;
  }

  nb::list parameters() const {
    nb::list out;
    for (const ktune::Argument& a : parameters_)
      out.append(nb::make_tuple(a.name, ktune::to_string(a.type), a.pointer));
    return out;
  }

 private:
  static ktune::LauncherOptions options(const std::string& spec, const std::string& results, const std::string& kernel,
                                        const std::string& cache_dir, bool quiet) {
    ktune::LauncherOptions o;
    o.spec = spec;
    o.results = results;
    o.kernel = kernel;
    o.cache_dir = cache_dir;
    if (quiet) o.report = {};
    return o;
  }

  void check_count(const nb::sequence& args) const {
    if (nb::len(args) != parameters_.size()) {
      std::string names;
      for (const ktune::Argument& a : parameters_) names += (names.empty() ? "" : ", ") + a.name;
      throw ktune::Error::bad_input("the kernel takes " + std::to_string(parameters_.size()) + " arguments (" + names +
                                    "), given " + std::to_string(nb::len(args)));
    }
  }

  ktune::Launcher launcher_;
  std::vector<ktune::Argument> parameters_;
};

}  // namespace

NB_MODULE(_ktune, m) {
  m.doc() = "ktune's libraries, bound for the ktune Python package";
  nb::object error = nb::borrow(PyErr_NewException("ktune.Error", PyExc_RuntimeError, nullptr));
  nb::object bad_input = nb::borrow(
      PyErr_NewException("ktune.BadInput", nb::make_tuple(error, nb::handle(PyExc_ValueError)).ptr(), nullptr));
  error_type = error.ptr();
  bad_input_type = bad_input.ptr();
  m.attr("Error") = error;
  m.attr("BadInput") = bad_input;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ktune::Error& e) {
      PyErr_SetString(e.kind() == ktune::Error::Kind::BadInput ? bad_input_type : error_type, e.what());
    }
  });

  m.def("run_command_line", &run_command_line, "args"_a, "capture"_a = false,
        "Runs `ktune ARGS...` in this process: (exit status, captured standard output).");
  m.def("set_worker_program", &ktune::set_worker_program, "path"_a,
        "The ktune executable that serves as compile child and GPU worker.");
  m.def("worker_program", &ktune::worker_program);
  m.def("spec_arguments", &spec_arguments, "spec"_a, "constants"_a = std::vector<std::pair<std::string, std::string>>{},
        "The kernel's parameters as the spec gives them: name, type, pointer, size, components, output.");
  nb::class_<PyLauncher>(m, "Launcher")
      .def(nb::init<const std::string&, const std::string&, const std::string&, const std::string&, bool>(),
           "spec"_a, "results"_a = "", "kernel"_a = "", "cache_dir"_a = "", "quiet"_a = false)
      .def("choose", &PyLauncher::choose, "problem"_a, "device_name"_a, "compute_capability"_a)
      .def("prepare", &PyLauncher::prepare, "problem"_a)
      .def("launch", &PyLauncher::launch, "problem"_a, "stream"_a, "args"_a)
      .def("run_host", &PyLauncher::run_host, "problem"_a, "args"_a)
      .def_prop_ro("parameters", &PyLauncher::parameters);
}
