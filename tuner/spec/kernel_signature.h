// A kernel's parameter list as its source declares it, read the way Kernel
// Tuner reads it (the text of the __global__ declaration), so a spec's
// arguments can be checked against it before anything is compiled or
// launched: how many, which are pointers, how wide each scalar is.
//
// The reading is of declarations written as text. A kernel whose name or
// parameter list a macro builds is not found (nullopt): nothing is checked.
// A parameter whose type is a template parameter or a type the reader does
// not know has width 0 (unknown): its pointer-ness is still checked.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

struct KernelParam {
  std::string text;     // as declared, e.g. "const float* __restrict__ a"
  std::string type;     // the type without qualifiers and pointer: "float", "float2", "T"
  bool pointer = false;
  int width = 0;        // bytes of a by-value scalar; 0 = unknown (or a pointer)
  bool known_type = false;  // `type` is a C/CUDA type the reader knows (not a typedef or template parameter)
};

// The parameters of the first `__global__` function named `name` in `source`;
// nullopt when the source declares none by that name.
std::optional<std::vector<KernelParam>> kernel_parameters(std::string_view source, std::string_view name);

// Whether `name` appears in `source` as an identifier at all (outside comments).
bool source_mentions(std::string_view source, std::string_view name);

// `source` followed by the text of every header it includes with quotes
// ("../common/x.cuh") that exists relative to the including file, recursively,
// each once: where a kernel defined in a header of the project is found.
// `dir` is the source's folder.
std::string with_local_headers(const std::string& source, const std::filesystem::path& dir);

}  // namespace ktune
