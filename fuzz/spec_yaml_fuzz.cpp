// A YAML spec: load it (every key, expression and limit), then do what
// `ktune space` does with a small space: count it, and evaluate each
// configuration's launch geometry, defines and metrics.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "spec_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_answer([&] { ktune::fuzz::load_and_use(text, ktune::Spec::Format::Yaml); });
  return 0;
}
