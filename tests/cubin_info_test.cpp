// SHA-256, the cubin ELF reader and the ptxas log parser. The nvcc test
// compares our reading of nvcc's cubins with ptxas's own report, live, when
// the toolkit's nvcc is installed (it is on build machines).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/test_util.h"
#include "tuner/compile/compiler.h"
#include "tuner/compile/cubin_info.h"
#include "tuner/base/sha256.h"

namespace ktune {
namespace {

using testing::kernels_dir;
using testing::TempDir;

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256::hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hex_of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, IncrementalEqualsOneShotAtEverySplit) {
  std::string text(300, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 7 + 3);
  std::string whole = Sha256::hex_of(text);
  for (std::size_t split : {0, 1, 55, 56, 63, 64, 65, 128, 299, 300}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    EXPECT_EQ(Sha256::hex(h.digest()), whole) << split;
  }
}

TEST(Sha256Test, FieldsCannotRunTogether) {
  Sha256 a, b;
  a.update_field("ab");
  a.update_field("c");
  b.update_field("a");
  b.update_field("bc");
  EXPECT_NE(Sha256::hex(a.digest()), Sha256::hex(b.digest()));
}

TEST(CubinInfoTest, NotAnElfIsAnErrorNotACrash) {
  std::string error;
  EXPECT_FALSE(read_kernel_resources("", "k", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(read_kernel_resources("\x7f" "ELF but not really", "k"));
  EXPECT_TRUE(cubin_kernel_names("garbage").empty());
}

TEST(CubinInfoTest, TruncatedCubinsNeverCrash) {
  CompilerOptions options;
  options.use_cache = false;
  CompileRequest r;
  r.source_path = kernels_dir() / "smem_spill.cu";
  r.kernel_name = "smem_stack";
  CompileResult res = Compiler(options).compile(r);
  ASSERT_TRUE(res.ok) << res.log;
  EXPECT_EQ(cubin_kernel_names(res.cubin).size(), 3u);
  std::string error;
  EXPECT_FALSE(read_kernel_resources(res.cubin, "not_there", &error));
  EXPECT_NE(error.find("not_there"), std::string::npos);
  for (std::size_t n = 0; n < res.cubin.size(); n += 97) {
    read_kernel_resources(std::string_view(res.cubin).substr(0, n), res.lowered_name);  // must not crash
  }
}

TEST(CubinInfoTest, PtxasLogParsing) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1kPf\n"
      "ptxas         .     232 bytes stack frame, 428 bytes spill stores, 424 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 232 bytes cumulative stack size, 4096 bytes smem\n"
      "ptxas info    : Compile time = 82.580 ms\n"
      "ptxas info    : Compiling entry function 'plain' for 'sm_80'\n"
      "ptxas info    : Function properties for plain\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"  // nvcc's layout
      "ptxas info    : Used 12 registers, used 0 barriers, 360 bytes cmem[0]\n";
  auto usage = parse_ptxas_log(log);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage["_Z1kPf"].registers, 32);
  EXPECT_EQ(usage["_Z1kPf"].barriers, 1);
  EXPECT_EQ(usage["_Z1kPf"].smem, 4096);
  EXPECT_EQ(usage["_Z1kPf"].stack_frame, 232);
  EXPECT_EQ(usage["_Z1kPf"].spill_stores, 428);
  EXPECT_EQ(usage["_Z1kPf"].spill_loads, 424);
  EXPECT_EQ(usage["plain"].registers, 12);
  EXPECT_EQ(usage["plain"].smem, 0);
  EXPECT_EQ(usage["plain"].spill_stores, 0);
  EXPECT_TRUE(parse_ptxas_log("kernel.cu(3): error: expected a \";\"\n").empty());
}

std::filesystem::path find_nvcc() {
  std::vector<std::filesystem::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::filesystem::path(home) / "bin/nvcc");
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c)) return c;
  }
  return {};
}

std::string run(const std::string& command) {
  std::string out;
  if (std::FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

// Every kernel of every sample, compiled by nvcc: our ELF figures must equal
// what ptxas printed (registers, static shared memory, stack frame).
TEST(CubinInfoTest, AgreesWithPtxasOnNvccCubins) {
  std::filesystem::path nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not installed";
  TempDir out;
  // nvcc takes about a second a run: these cover every kernel shape (spills,
  // stack, shared memory, launch bounds) and both shared-memory layouts
  // (sm_80's, and sm_90+'s with a reserved window in the section).
  const std::vector<std::pair<int, std::string>> runs = {{80, ""}, {90, ""}, {120, ""}, {90, "-maxrregcount=32"}};
  int compared = 0;
  for (const auto& [sm, extra] : runs) {
    std::filesystem::path cubin = out.path() / ("k" + std::to_string(compared) + ".cubin");
    std::string log = run(nvcc.string() + " -cubin -arch=sm_" + std::to_string(sm) + " -Xptxas -v " + extra +
                          " " + (kernels_dir() / "smem_spill.cu").string() + " -o " + cubin.string() + " 2>&1");
    std::ifstream in(cubin, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_FALSE(bytes.empty()) << log;
    auto ptxas = parse_ptxas_log(log);
    for (const std::string& kernel : cubin_kernel_names(bytes)) {
      auto r = read_kernel_resources(bytes, kernel);
      ASSERT_TRUE(r && ptxas.count(kernel)) << kernel << "\n" << log;
      EXPECT_EQ(r->registers, ptxas[kernel].registers) << kernel << " sm_" << sm;
      EXPECT_EQ(r->static_smem, static_cast<std::size_t>(ptxas[kernel].smem)) << kernel << " sm_" << sm;
      EXPECT_EQ(r->local_bytes, static_cast<std::size_t>(ptxas[kernel].stack_frame)) << kernel << " sm_" << sm;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 12);
}

}  // namespace
}  // namespace ktune
