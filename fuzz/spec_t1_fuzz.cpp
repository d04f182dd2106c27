// A T1 JSON file: load it as `ktune space FILE.json` would, then use the
// space as spec_yaml_fuzz does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "spec_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ktune::fuzz::expect_answer([&] { ktune::fuzz::load_and_use(text, ktune::Spec::Format::T1); });
  return 0;
}
