#include "db/interchange/device_names.h"

#include <cctype>
#include <string>
#include <vector>

namespace ktune::db {
namespace {

std::vector<std::string> words(std::string_view name) {
  std::vector<std::string> out(1);
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else if (!out.back().empty()) out.emplace_back();
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

// Data-centre and workstation parts named by one word of their own.
struct Part {
  const char* word;
  int cc;
};
constexpr Part kParts[] = {
    {"GB200", 100}, {"B200", 100}, {"B100", 100},                                          // Blackwell
    {"GH200", 90},  {"H200", 90},  {"H100", 90},  {"H800", 90},  {"H20", 90},               // Hopper
    {"L40S", 89},   {"L40", 89},   {"L20", 89},   {"L4", 89},    {"ADA", 89},               // Ada
    {"A100", 80},   {"A800", 80},  {"A30", 80},                                             // Ampere GA100
    {"A40", 86},    {"A10", 86},   {"A10G", 86},  {"A16", 86},   {"A2", 86},                // Ampere GA10x
    {"A6000", 86},  {"A5500", 86}, {"A5000", 86}, {"A4500", 86}, {"A4000", 86}, {"A2000", 86},
    {"T4", 75},     {"V100", 70},  {"P100", 60},  {"P40", 61},   {"P4", 61},
};

// GeForce: RTX/GTX followed by a four-digit model, by its first two digits.
int geforce(const std::vector<std::string>& w) {
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] != "RTX" && w[i] != "GTX") continue;
    const std::string& m = w[i + 1];
    if (m.size() != 4 || !std::isdigit(static_cast<unsigned char>(m[0]))) continue;
    const std::string series = m.substr(0, 2);
    if (series == "50") return 120;
    if (series == "40") return 89;
    if (series == "30") return 86;
    if (series == "20" || series == "16") return 75;
    if (series == "10") return 61;
  }
  return 0;
}

}  // namespace

int known_compute_capability(std::string_view device_name) {
  const std::vector<std::string> w = words(device_name);
  for (const Part& p : kParts)
    for (const std::string& x : w)
      if (x == p.word) return p.cc;
  if (const int cc = geforce(w)) return cc;
  for (size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == "TITAN" && w[i + 1] == "RTX") return 75;
  return 0;
}

}  // namespace ktune::db
