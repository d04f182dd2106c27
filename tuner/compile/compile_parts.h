// What the three parts of the compiler share (compiler.cpp: NVRTC and the
// cache levels; compile_key.cpp: the first-level cache key; nvcc.cpp: the
// nvcc backend): how a CompileRequest turns into options and folders, and
// the files and headers they read. Not for use outside tuner/compile.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/compile/compiler.h"

namespace ktune::compile_detail {

// Asks ptxas for its report (registers, spills).
inline constexpr std::string_view kPtxasVerbose = "--ptxas-options=-v";

// A file's contents, or nullopt where it cannot be read.
std::optional<std::string> slurp(const std::filesystem::path& path);
// The folder of the request's source file (empty for an in-memory source).
std::filesystem::path source_dir(const CompileRequest& r);
// Where includes are looked up: the source's folder, then the request's include folders.
std::vector<std::filesystem::path> search_dirs(const CompileRequest& r);
// Options that decide the output and mean the same on every machine; the
// include paths are left out so a cache can move between hosts.
std::vector<std::string> portable_options(const CompileRequest& r);
// $CUDA_HOME/include, else the toolkit ktune was built against.
std::filesystem::path default_cuda_include_dir();
// Every header ktune hands NVRTC in memory: its stand-ins for the C++
// standard headers, then HIP's kernel-language header.
const std::vector<std::pair<std::string_view, std::string_view>>& nvrtc_headers();
// Appends `line` to a compile log on a line of its own.
void append_line(std::string& log, const std::string& line);
// nvcc's "release X.Y, ..." line, part of the key of an nvcc compile.
std::string nvcc_version();

}  // namespace ktune::compile_detail
