// Every spec in templates/ is valid, and a sample of its
// configurations (the first valid one plus random ones) compiles through NVRTC
// for sm_80 and sm_90 without a GPU, with no register spills (a template
// written for sm_90a, kernel.archs, for that instead of sm_90 and not for sm_80).
// The reference kernel of each compiles too.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "tuner/build/build.h"
#include "tuner/compile/compiler.h"
#include "tuner/spec/spec.h"

namespace ktune {
namespace {

namespace fs = std::filesystem;

// Every spec of every template folder (a folder may hold variants, e.g. attention's
// causal one beside it).
std::vector<std::string> template_specs() {
  std::vector<std::string> out;
  for (const auto& d : fs::directory_iterator(KTUNE_TEMPLATES_DIR))
    if (d.is_directory())
      for (const auto& f : fs::directory_iterator(d.path()))
        if (f.path().extension() == ".yaml") out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class Template : public ::testing::TestWithParam<std::string> {};

TEST_P(Template, SpecLoadsAndASampleCompilesForSm80AndSm90) {
  const Spec spec = load_spec(GetParam());
  const SearchSpace& space = spec.space();
  ASSERT_GT(space.count_valid(), 0u);
  std::mt19937_64 rng(7);
  std::vector<Config> sample = space.sample(2, rng, true);
  sample.insert(sample.begin(), space.at(0));
  CompilerOptions co;
  co.cache_dir = fs::temp_directory_path() / ("ktune-templates-test-" + std::to_string(::getpid()));
  const Compiler compiler(co);
  int compiled_archs = 0;
  for (int sm : {80, 90}) {
    // A kernel written for sm_90a (kernel.archs) compiles for it in place of
    // sm_90 and is left out on sm_80; every template compiles for at least one.
    const std::optional<Arch> target = spec.kernel.target_arch(Arch(sm));
    if (!target) continue;
    ++compiled_archs;
    for (const Config& c : sample) {
      const auto values = space.values(c);
      const Build b = build_one(spec, values, *target, compiler);
      ASSERT_TRUE(b.compiled()) << space.config_key(c) << ": " << b.reason;
      const CompileResult& r = b.compile;
      ASSERT_TRUE(r.ok) << spec.kernel.name << " " << space.config_key(c) << " " << target->name() << ":\n" << r.log;
      EXPECT_GT(r.resources.registers, 0);
      EXPECT_LE(std::max(r.resources.spill_store_bytes, 0), 0) << space.config_key(c) << " " << target->name() << " spills";
    }
    if (spec.verify.mode == Verify::Mode::Reference) {
      const auto values = space.values(sample[0]);
      const CompileResult ref =
          compiler.compile(make_reference_request(spec, values, *spec.geometry(values).launch, *target));
      EXPECT_TRUE(ref.ok) << spec.verify.kernel << ":\n" << ref.log;
    }
  }
  EXPECT_GE(compiled_archs, 1) << spec.kernel.name << " is written for neither sm_80 nor sm_90";
  fs::remove_all(co.cache_dir);
}

INSTANTIATE_TEST_SUITE_P(Templates, Template, ::testing::ValuesIn(template_specs()),
                         [](const auto& info) { return fs::path(info.param).stem().string(); });

}  // namespace
}  // namespace ktune
