// The spec's arguments against the kernel's parameters, before anything is
// compiled: each kind of mismatch, kernels in local headers and templates,
// and CUDA's vector types as argument types.
#include <gtest/gtest.h>

#include <fstream>

#include "ktune/error.h"
#include "test_util.h"
#include "tuner/spec/kernel_signature.h"
#include "tuner/spec/spec.h"

namespace ktune {
namespace {

using testing::TempDir;

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories((dir.path() / name).parent_path());
  std::ofstream(dir.file(name)) << text;
  return dir.file(name);
}

bool has_note(const Spec& s, const std::string& part) {
  for (const auto& n : s.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// The message require_runnable() refuses the spec with, "" when it is runnable.
std::string refusal(const Spec& s) {
  try {
    s.require_runnable();
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    return e.message();
  }
}

const char* kKernel = R"cu(
#include "common/helpers.cuh"
// not this one: __global__ void saxpy(int);
extern "C" __global__ void __launch_bounds__(256)
saxpy(float* __restrict__ y, const float2* x, float a, int n, double scale) { }
)cu";

std::string spec_with(const std::string& arguments) {
  return "kernel: {name: saxpy, source: k.cu}\nproblem_size: [1024]\ntune_params: {block_size_x: [128, 256]}\n"
         "arguments:\n" + arguments;
}

const char* kGood = "  - {name: y, type: float*, size: 1024, fill: zeros, output: true}\n"
                    "  - {name: x, type: float2*, size: 1024, fill: random}\n"
                    "  - {name: a, type: float, value: 2.0}\n"
                    "  - {name: n, type: int32, value: 1024}\n"
                    "  - {name: scale, type: double, value: 0.5}\n";

TEST(KernelSignature, ReadsTheDeclarationAsWritten) {
  const auto p = kernel_parameters(kKernel, "saxpy");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 5u);
  EXPECT_TRUE((*p)[0].pointer);
  EXPECT_EQ((*p)[0].type, "float");
  EXPECT_EQ((*p)[1].type, "float2");
  EXPECT_FALSE((*p)[2].pointer);
  EXPECT_EQ((*p)[2].width, 4);
  EXPECT_EQ((*p)[4].width, 8);
  EXPECT_FALSE(kernel_parameters(kKernel, "missing"));
  const auto t = kernel_parameters("template <typename T, int B>\n__global__ void k(T* out, T v, std::size_t n) {}", "k");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)[1].width, 0);  // a template parameter: unknown width
  EXPECT_EQ((*t)[2].width, 8);
}

TEST(KernelSignature, MatchingArgumentsAreRunnableAndVectorTypesCountTheirLanes) {
  TempDir dir;
  write(dir, "k.cu", kKernel);
  write(dir, "common/helpers.cuh", "#pragma once\n");
  const Spec s = load_spec(write(dir, "s.yaml", spec_with(kGood)));
  EXPECT_EQ(refusal(s), "");
  ASSERT_EQ(s.arguments.size(), 5u);
  EXPECT_EQ(s.arguments[1].components, 2);
  EXPECT_EQ(s.arguments[1].size, 2048);  // 1024 float2 are 2048 floats
  EXPECT_EQ(s.arguments[1].type, ElemType::F32);
  EXPECT_FALSE(has_note(s, "raw bytes"));
}

TEST(KernelSignature, EachMismatchIsRefusedOnceBeforeCompiling) {
  TempDir dir;
  write(dir, "k.cu", kKernel);
  const std::string lines[] = {"  - {name: y, type: float*, size: 1024, fill: zeros, output: true}\n",
                               "  - {name: x, type: float2*, size: 1024, fill: random}\n",
                               "  - {name: a, type: float, value: 2.0}\n", "  - {name: n, type: int32, value: 1024}\n",
                               "  - {name: scale, type: double, value: 0.5}\n"};
  // A dropped argument, an extra one, a scalar for a pointer, a width that differs.
  const Spec dropped = load_spec(write(dir, "a.yaml", spec_with(lines[0] + lines[1] + lines[2] + lines[3])));
  EXPECT_NE(refusal(dropped).find("takes 5 parameter(s), the spec passes 4"), std::string::npos) << refusal(dropped);
  EXPECT_NE(refusal(dropped).find("[double scale]"), std::string::npos);
  EXPECT_GT(dropped.space().count_valid(), 0u);  // the space is still counted
  EXPECT_EQ(dropped.source_hash.size(), 64u);       // the source was read: a mismatch is not a missing file
  const Spec extra = load_spec(write(dir, "b.yaml", spec_with(kGood + std::string("  - {name: z, type: int32, value: 1}\n"))));
  EXPECT_NE(refusal(extra).find("takes 5 parameter(s), the spec passes 6"), std::string::npos);
  const Spec scalar = load_spec(write(dir, "c.yaml", spec_with("  - {name: y, type: float, value: 1.0}\n" + lines[1] +
                                                                 lines[2] + lines[3] + lines[4])));
  EXPECT_NE(refusal(scalar).find("is a scalar but the parameter [float* __restrict__ y] is a pointer"), std::string::npos)
      << refusal(scalar);
  const Spec width = load_spec(write(dir, "d.yaml", spec_with(lines[0] + lines[1] + lines[2] + lines[3] +
                                                                "  - {name: scale, type: float, value: 0.5}\n")));
  EXPECT_NE(refusal(width).find("is 4 bytes but the parameter [double scale] takes 8"), std::string::npos)
      << refusal(width);
  // A buffer of another element type: a note (raw bytes, as Kernel Tuner passes them).
  const Spec pointee = load_spec(write(dir, "e.yaml", spec_with(lines[0] +
                                                                  "  - {name: x, type: float*, size: 2048, fill: random}\n" +
                                                                  lines[2] + lines[3] + lines[4])));
  EXPECT_EQ(refusal(pointee), "");
  EXPECT_TRUE(has_note(pointee, "is a buffer of float for the parameter [const float2* x]; passed as raw bytes"));
}

TEST(KernelSignature, AnUndefinedKernelOrReferenceIsRefused) {
  TempDir dir;
  write(dir, "k.cu", kKernel);
  std::string text = spec_with(kGood);
  text.replace(text.find("name: saxpy"), 11, "name: saxpi");
  EXPECT_NE(refusal(load_spec(write(dir, "a.yaml", text))).find("kernel 'saxpi' is not defined"), std::string::npos);
  const Spec ref = load_spec(write(dir, "b.yaml", spec_with(kGood) + "verify: {reference: {kernel: saxpy_ref}}\n"));
  EXPECT_NE(refusal(ref).find("kernel 'saxpy_ref' is not defined"), std::string::npos) << refusal(ref);
}

TEST(KernelSignature, AKernelInALocalHeaderIsFoundAndAMacroBuiltOneIsNoted) {
  TempDir dir;
  write(dir, "inc/kern.cuh", "extern \"C\" __global__ void saxpy(float* y, const float2* x, float a, int n, double s) {}\n");
  write(dir, "k.cu", "#include \"inc/kern.cuh\"\n");
  EXPECT_EQ(refusal(load_spec(write(dir, "a.yaml", spec_with(kGood)))), "");
  write(dir, "k.cu", "#define KERNEL(name) extern \"C\" __global__ void name(float* y)\nKERNEL(saxpy) {}\n");
  const Spec macro = load_spec(write(dir, "b.yaml", spec_with(kGood)));
  EXPECT_EQ(refusal(macro), "");
  EXPECT_TRUE(has_note(macro, "could not be read from its source"));
}

// A T1 file passing more arguments than its kernel takes (as one published
// file does) loads and is counted, and is refused before compiling.
TEST(KernelSignature, AT1FileWithAnExtraArgumentIsRefusedBeforeCompiling) {
  TempDir dir;
  write(dir, "pip.cu", "extern \"C\" __global__ void inside(int* bitmap, float2* points, int n) {}\n");
  const Spec s = load_spec(write(dir, "pip.json", R"json({
    "ConfigurationSpace": {"TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": [64, 128]}]},
    "KernelSpecification": {"KernelName": "inside", "KernelFile": "pip.cu", "ProblemSize": [4096],
      "LocalSize": {"X": "block_size_x"}, "GlobalSize": {"X": "1"},
      "Arguments": [
        {"Name": "bitmap", "Type": "int32", "MemoryType": "Vector", "Size": 4096, "FillType": "Constant", "FillValue": 0},
        {"Name": "points", "Type": "float2", "MemoryType": "Vector", "Size": 4096, "FillType": "Random", "FillValue": 1.0},
        {"Name": "vertices", "Type": "float", "MemoryType": "Vector", "Size": 1200, "FillType": "Random", "FillValue": 1.0},
        {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 4096}]}
  })json"));
  EXPECT_EQ(s.space().count_valid(), 2u);
  EXPECT_EQ(s.arguments[1].components, 2);
  EXPECT_EQ(s.arguments[1].size, 8192);
  EXPECT_NE(refusal(s).find("takes 3 parameter(s), the spec passes 4"), std::string::npos) << refusal(s);
}

TEST(KernelSignature, VectorTypesOfEveryBase) {
  TempDir dir;
  write(dir, "v.cu",
        "extern \"C\" __global__ void v(int4* a, double2* b, __half2* c, uchar4* d, short2* e) {}\n");
  const Spec s = load_spec(write(dir, "v.yaml",
                                 "kernel: {name: v, source: v.cu}\nproblem_size: [64]\ntune_params: {block_size_x: [64]}\n"
                                 "arguments:\n"
                                 "  - {name: a, type: int4*, size: 64, fill: random}\n"
                                 "  - {name: b, type: double2*, size: 64, fill: random}\n"
                                 "  - {name: c, type: half2*, size: 64, fill: random}\n"
                                 "  - {name: d, type: uchar4*, size: 64, fill: random}\n"
                                 "  - {name: e, type: short2*, size: 64, fill: random}\n"));
  EXPECT_EQ(refusal(s), "");
  const int lanes[] = {4, 2, 2, 4, 2};
  const ElemType types[] = {ElemType::I32, ElemType::F64, ElemType::F16, ElemType::U8, ElemType::I16};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s.arguments[i].components, lanes[i]) << i;
    EXPECT_EQ(s.arguments[i].size, 64 * lanes[i]) << i;
    EXPECT_EQ(s.arguments[i].type, types[i]) << i;
  }
  EXPECT_FALSE(has_note(s, "raw bytes"));
  try {
    load_spec(write(dir, "w.yaml", "kernel: {name: v, source: v.cu}\nproblem_size: [64]\ntune_params: {block_size_x: [64]}\n"
                                   "arguments:\n  - {name: a, type: float2, value: 1.0}\n"));
    ADD_FAILURE() << "a vector by value";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("a vector type by value"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune

namespace ktune {
namespace {

// `memory: constant` (YAML) and MemType Constant (T1): a __constant__ array,
// not a parameter; Kernel Tuner's T1 convention of passing it as one too holds
// where the kernel takes it.
TEST(ConstantMemoryArguments, AreNotParametersUnlessTheKernelTakesThem) {
  TempDir dir;
  write(dir, "c.cu", "__constant__ float taps[8];\nextern \"C\" __global__ void c(float* out, const float* in) {}\n"
                     "extern \"C\" __global__ void d(float* out, const float* in, const float* taps_too) {}\n");
  const std::string head = "problem_size: [64]\ntune_params: {block_size_x: [64]}\narguments:\n"
                           "  - {name: out, type: float*, size: 64, fill: zeros, output: true}\n"
                           "  - {name: in, type: float*, size: 64, fill: random}\n"
                           "  - {name: taps, type: float*, size: 8, fill: random, memory: constant}\n";
  const Spec c = load_spec(write(dir, "c.yaml", "kernel: {name: c, source: c.cu}\n" + head));
  EXPECT_EQ(refusal(c), "");
  EXPECT_TRUE(c.arguments[2].constant_memory);
  EXPECT_FALSE(c.arguments[2].passed_too);
  const Spec d = load_spec(write(dir, "d.yaml", "kernel: {name: d, source: c.cu}\n" + head));
  EXPECT_EQ(refusal(d), "");
  EXPECT_TRUE(d.arguments[2].passed_too);
  EXPECT_THROW(load_spec(write(dir, "e.yaml", "kernel: {name: c, source: c.cu}\n" + head.substr(0, head.size() - 1) +
                                                  "\n  - {name: k, type: int32, value: 1, memory: constant}\n")),
               Error);
  std::string bad = head;
  bad.replace(bad.find("memory: constant"), 16, "memory: shared");
  EXPECT_THROW(load_spec(write(dir, "f.yaml", "kernel: {name: c, source: c.cu}\n" + bad)), Error);
}

}  // namespace
}  // namespace ktune
