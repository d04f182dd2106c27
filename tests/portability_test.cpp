// Comparing one kernel across devices: `ktune compare` on four GPUs' Kernel
// Tuner caches of one kernel (tests/data/portability, one of them an
// interrupted run, one with a failed configuration) against a computation
// straight from the raw files; `tune --configs-from`; and the deployment
// fallback for an unknown device (header, select_deploy, the Launcher, the
// JSON export), which must be the most portable configuration.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "db/export/deploy.h"
#include "db/interchange/interchange.h"
#include "db/portability.h"
#include "db/store.h"
#include "ktune/launcher.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kData = fs::path(KTUNE_TESTS_DIR) / "data" / "portability";
const std::vector<std::string> kFiles = {"rtx3090.json", "rtx2080ti.json", "a100.json", "a4000.json"};

using ktune::testing::Ran;

// Runs ktune with `args`; stderr merged into the output when asked.
Ran ktune(const std::string& args, bool merge_stderr = false) { return ktune::testing::run_ktune(args, merge_stderr); }

int shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One raw cache file as the test reads it, independently of ktune's reader:
// config key -> time, nullopt for a failed record.
struct Raw {
  std::string device;
  std::map<std::string, std::optional<double>> times;
  std::optional<double> best() const {
    std::optional<double> b;
    for (const auto& [k, t] : times)
      if (t && (!b || *t < *b)) b = t;
    return b;
  }
  std::string best_key() const {
    std::string key;
    for (const auto& [k, t] : times)
      if (t && (key.empty() || *t < *times.at(key))) key = k;
    return key;
  }
};

Raw read_raw(const std::string& file) {
  std::string text = read_all(kData / file);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.back() == ',') text.back() = '}', text += "}";  // an interrupted run: close it
  const Json j = Json::parse(text);
  Raw r;
  r.device = j["device_name"];
  for (const auto& [key, rec] : j["cache"].items())
    r.times[key] = rec.contains("__error__") || !rec["time"].is_number() ? std::nullopt
                                                                          : std::optional<double>(rec["time"]);
  return r;
}

// The comparison from the raw files: each device's optimum, the matrix, and
// the configuration measured everywhere with the smallest worst ratio.
struct Direct {
  std::vector<Raw> devices;  // in the order compared
  std::vector<std::vector<std::optional<double>>> matrix;
  std::string portable;
  double worst = 0, pp = 0;
  size_t common = 0;
};

Direct direct(std::vector<Raw> devices) {
  Direct d;
  d.devices = std::move(devices);
  const size_t n = d.devices.size();
  d.matrix.assign(n, std::vector<std::optional<double>>(n));
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b) {
      auto it = d.devices[b].times.find(d.devices[a].best_key());
      if (it != d.devices[b].times.end() && it->second) d.matrix[a][b] = *it->second / *d.devices[b].best();
    }
  for (const auto& [key, t0] : d.devices[0].times) {
    double worst = 0, inverse = 0;
    bool everywhere = true;
    for (const Raw& r : d.devices) {
      auto it = r.times.find(key);
      if (it == r.times.end() || !it->second) {
        everywhere = false;
        break;
      }
      const double ratio = *it->second / *r.best();
      worst = std::max(worst, ratio);
      inverse += ratio;
    }
    if (!everywhere) continue;
    ++d.common;
    const double pp = double(n) / inverse;
    if (d.portable.empty() || worst < d.worst || (worst == d.worst && pp > d.pp)) {
      d.portable = key;
      d.worst = worst;
      d.pp = pp;
    }
  }
  return d;
}

std::string key_of(const Json& config) {
  return std::to_string(config["block_size_x"].get<int>()) + "," + std::to_string(config["tile_size_x"].get<int>());
}

class Portability : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string files;
    for (const std::string& f : kFiles) files.append(" ").append((kData / f).string());
    const Ran imp = ktune("import" + files + " --db " + db(), true);
    ASSERT_EQ(imp.status, 0) << imp.out;
  }
  std::string db() const { return dir.file("p.db"); }
  ktune::testing::TempDir dir;
};

void expect_matches(const Json& out, const Direct& d) {
  ASSERT_EQ(out["devices"].size(), d.devices.size()) << out.dump(1);
  for (size_t a = 0; a < d.devices.size(); ++a) {
    const Json& dev = out["devices"][a];
    EXPECT_EQ(dev["name"], d.devices[a].device);
    EXPECT_EQ(key_of(dev["best"]["config"]), d.devices[a].best_key());
    EXPECT_DOUBLE_EQ(dev["best"]["time_ms"].get<double>(), *d.devices[a].best());
    size_t measured = 0;
    for (const auto& [k, t] : d.devices[a].times) measured += t.has_value();
    EXPECT_EQ(dev["measured"].get<size_t>(), measured);
    for (size_t b = 0; b < d.devices.size(); ++b) {
      const Json& cell = out["matrix"][a][b];
      if (!d.matrix[a][b]) {
        EXPECT_TRUE(cell.is_null()) << a << "," << b;
        continue;
      }
      ASSERT_TRUE(cell.is_number()) << a << "," << b;
      EXPECT_NEAR(cell.get<double>(), *d.matrix[a][b], 1e-12) << a << "," << b;
      EXPECT_GE(cell.get<double>(), 1.0);
    }
  }
  ASSERT_TRUE(out["portable"].is_object()) << out.dump(1);
  EXPECT_EQ(key_of(out["portable"]["config"]), d.portable);
  EXPECT_NEAR(out["portable"]["worst"].get<double>(), d.worst, 1e-12);
  EXPECT_NEAR(out["portable"]["pp"].get<double>(), d.pp, 1e-12);
  EXPECT_EQ(out["portable"]["common"].get<size_t>(), d.common);
}

TEST_F(Portability, CompareEqualsADirectComputationFromTheRawFiles) {
  const Ran r = ktune("compare --json --db " + db());
  ASSERT_EQ(r.status, 0) << r.out;
  const Json out = Json::parse(r.out);
  EXPECT_EQ(out["kernel"], "saxpy");
  EXPECT_EQ(out["problem_size"], Json::array({16777216}));
  // Devices as stored, sorted by name.
  std::vector<Raw> raw;
  for (const std::string& f : kFiles) raw.push_back(read_raw(f));
  std::sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) { return a.device < b.device; });
  const Direct d = direct(raw);
  expect_matches(out, d);
  // The fixture is built so that the A4000's interrupted run never reached the
  // 2080 Ti's and the A100's optima: two gaps, each with the command that fills it.
  size_t gaps = 0;
  for (const auto& row : d.matrix) gaps += size_t(std::count(row.begin(), row.end(), std::nullopt));
  EXPECT_EQ(gaps, 2u);
  ASSERT_EQ(out["missing"].size(), 2u);
  for (const Json& m : out["missing"]) {
    EXPECT_EQ(m["on"], "NVIDIA RTX A4000");
    EXPECT_EQ(m["state"], "not_measured");
    EXPECT_NE(m["command"].get<std::string>().find("--configs-from '" + m["optimum_of"].get<std::string>() + "'"),
              std::string::npos) << m.dump();
  }
  EXPECT_EQ(out["devices"][1]["failed"], 1) << "the 2080 Ti's failed launch";
  // Every configuration the A4000 reached is measured on all four.
  EXPECT_EQ(d.common, 22u);
}

TEST_F(Portability, DevicesByPartsOfTheirNamesInTheOrderGiven) {
  const Ran r = ktune("compare --json --devices 3090,a100,'2080 ti' --db " + db());
  ASSERT_EQ(r.status, 0) << r.out;
  const Direct d = direct({read_raw("rtx3090.json"), read_raw("a100.json"), read_raw("rtx2080ti.json")});
  expect_matches(Json::parse(r.out), d);
  EXPECT_EQ(d.common, 29u);  // all but the 2080 Ti's failure
}

// The parameter effects as docs/compare.md defines them, from the raw file.
TEST_F(Portability, ParameterEffectsAreBestRatiosAndVarianceExplained) {
  const Ran r = ktune("compare --json --devices a100 --db " + db());
  ASSERT_EQ(r.status, 0) << r.out;
  const Json out = Json::parse(r.out);
  const Raw a100 = read_raw("a100.json");
  for (size_t p = 0; p < 2; ++p) {
    std::map<int, std::vector<double>> by_value;
    std::vector<double> all;
    for (const auto& [key, t] : a100.times) {
      const size_t comma = key.find(',');
      const int v = std::stoi(p == 0 ? key.substr(0, comma) : key.substr(comma + 1));
      by_value[v].push_back(std::log(*t));
      all.push_back(std::log(*t));
    }
    double mean = 0, total = 0, between = 0, worst = 1;
    for (double x : all) mean += x / double(all.size());
    for (double x : all) total += (x - mean) * (x - mean);
    for (const auto& [v, xs] : by_value) {
      double m = 0;
      for (double x : xs) m += x / double(xs.size());
      between += double(xs.size()) * (m - mean) * (m - mean);
      worst = std::max(worst, std::exp(*std::min_element(xs.begin(), xs.end())) / *a100.best());
    }
    const Json& e = out["parameters"][p]["devices"][0];
    EXPECT_NEAR(e["variance_explained"].get<double>(), between / total, 1e-9) << p;
    EXPECT_NEAR(e["worst_best_ratio"].get<double>(), worst, 1e-9) << p;
    EXPECT_EQ(e["values"].size(), by_value.size());
  }
  EXPECT_EQ(out["parameters"][0]["name"], "block_size_x");
}

TEST_F(Portability, BadInputIsExitTwoWithWhatToDo) {
  Ran r = ktune("compare --devices h100 --db " + db(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("'h100' has no results of kernel 'saxpy'"), std::string::npos) << r.out;
  r = ktune("compare --devices rtx --db " + db(), true);  // three devices have RTX in their name
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("matches 3 devices"), std::string::npos) << r.out;
  r = ktune("compare --arch sm_80 --db " + db(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("needs the spec"), std::string::npos) << r.out;
  r = ktune("compare --problem-size 4096x --kernel saxpy --db " + db(), true);
  EXPECT_EQ(r.status, 1) << r.out;
  r = ktune("compare --problem-size 40a96 --db " + db(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--problem-size"), std::string::npos) << r.out;
  // A second kernel: compare needs to be told which.
  ASSERT_EQ(ktune("import " + (fs::path(KTUNE_TESTS_DIR) / "data/kt/rtx3090_vector_add.json").string() + " --db " +
                  db()).status, 0);
  r = ktune("compare --db " + db(), true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("choose one with --kernel"), std::string::npos) << r.out;
  EXPECT_EQ(ktune("compare --kernel saxpy --db " + db()).status, 0);
}

// The offline view compiles each device's optimum and the most portable
// configuration for an architecture without measuring (NVRTC, no GPU).
TEST_F(Portability, OfflineViewCompilesTheWinnersForAnArchitecture) {
  const Ran r = ktune("compare " + (kData / "saxpy.yaml").string() + " --arch sm_80 --json --db " + db(), true);
  ASSERT_EQ(r.status, 0) << r.out;
  const Json out = Json::parse(r.out.substr(r.out.find('{')));
  const Json& off = out["offline"];
  EXPECT_EQ(off["arch"], "sm_80");
  EXPECT_EQ(off["measured"], false);
  // Four optima, one of them (the A4000's) also the most portable.
  ASSERT_EQ(off["configs"].size(), 4u);
  size_t portable = 0;
  for (const Json& c : off["configs"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_GT(c["registers"].get<int>(), 0);
    EXPECT_GT(c["occupancy"].get<double>(), 0);
    portable += c["portable"].get<bool>();
  }
  EXPECT_EQ(portable, 1u);
  const Ran text = ktune("compare " + (kData / "saxpy.yaml").string() + " --arch sm_80 --db " + db());
  EXPECT_NE(text.out.find("offline view for sm_80: compiled with NVRTC"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not measured"), std::string::npos);
}

// --configs-from: the A100's fastest configurations, measured on a "3090" (a
// replay of its recording), fill that column of the matrix.
TEST(PortabilityConfigsFrom, MeasuresAnotherDevicesFastestAndCompareSeesThem) {
  ktune::testing::TempDir dir;
  const std::string db = dir.file("x.db");
  ASSERT_EQ(ktune("import " + (kData / "a100.json").string() + " " + (kData / "rtx2080ti.json").string() +
                  " --db " + db).status, 0);
  const std::string spec = (kData / "saxpy.yaml").string();
  const Ran t = ktune("tune " + spec + " --simulate " + (kData / "rtx3090.json").string() +
                      " --configs-from a100 --top 3 --json --db " + db, true);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("measuring the 3 fastest of 30 configurations NVIDIA A100-PCIE-40GB measured"),
            std::string::npos) << t.out;
  const Ran res = ktune("results --device 3090 --json --db " + db);
  const Json rows = Json::parse(res.out);
  ASSERT_EQ(rows.size(), 3u) << res.out;
  // Exactly the A100's three fastest.
  const Raw a100 = read_raw("a100.json");
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [k, v] : a100.times) ranked.emplace_back(*v, k);
  std::sort(ranked.begin(), ranked.end());
  std::set<std::string> want = {ranked[0].second, ranked[1].second, ranked[2].second}, got;
  for (const Json& row : rows) got.insert(key_of(row["config"]));
  EXPECT_EQ(got, want);
  const Ran c = ktune("compare --include-replays --json --devices a100,3090 --db " + db);
  ASSERT_EQ(c.status, 0) << c.out;
  const Json out = Json::parse(c.out);
  EXPECT_EQ(out["devices"][1]["name"], "NVIDIA GeForce RTX 3090 (replay)");
  ASSERT_TRUE(out["matrix"][0][1].is_number()) << c.out;
  const Raw r3090 = read_raw("rtx3090.json");
  // The replay measured only the A100's top 3: the ratio is to the best of those.
  double best3090 = 1e30;
  for (const std::string& k : want) best3090 = std::min(best3090, *r3090.times.at(k));
  EXPECT_NEAR(out["matrix"][0][1].get<double>(), *r3090.times.at(a100.best_key()) / best3090, 1e-12);
  // Without --include-replays the replay's rows are left out, and it says so.
  const Ran plain = ktune("compare --devices a100 --db " + db, true);
  EXPECT_NE(plain.out.find("--include-replays compares them"), std::string::npos) << plain.out;
  // A device with no results of the kernel is bad input, naming what there is.
  const Ran none = ktune("tune " + spec + " --simulate " + (kData / "rtx3090.json").string() +
                         " --configs-from a4000 --db " + db, true);
  EXPECT_EQ(none.status, 2) << none.out;
}

// --configs FILE: exactly the configurations a file lists, in its order;
// bad entries are bad input naming them.
TEST(PortabilityConfigsFrom, AListedFileIsMeasuredAsListed) {
  ktune::testing::TempDir dir;
  const std::string db = dir.file("x.db"), list = dir.file("list.json"), bad = dir.file("bad.json");
  std::ofstream(list) << R"([{"block_size_x": 256, "tile_size_x": 2}, {"tile_size_x": 1, "block_size_x": 32}])";
  const std::string spec = (kData / "saxpy.yaml").string(), data = (kData / "rtx3090.json").string();
  const Ran t = ktune("tune " + spec + " --simulate " + data + " --configs " + list + " --json --db " + db, true);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("measuring the 2 configurations listed in"), std::string::npos) << t.out;
  // Proposed in the file's order; stored as each replayed measurement completes.
  const Json rows = Json::parse(ktune("results --json --db " + db).out);
  ASSERT_EQ(rows.size(), 2u);
  const std::set<std::string> got = {key_of(rows[0]["config"]), key_of(rows[1]["config"])};
  EXPECT_EQ(got, (std::set<std::string>{"256,2", "32,1"}));
  const std::pair<std::string, std::string> cases[] = {
      {R"([{"block_size_x": 256}])", "configuration 1: no value for parameter 'tile_size_x'"},
      {R"([{"block_size_x": 256, "tile_size_x": 2, "unroll": 1}])", "unknown parameter 'unroll'"},
      {R"([{"block_size_x": 48, "tile_size_x": 2}])", "not in its parameter's list"},
      {R"({"block_size_x": 48})", "expected a JSON list"},
  };
  for (const auto& [text, words] : cases) {
    std::ofstream(bad) << text;
    const Ran r = ktune("tune " + spec + " --simulate " + data + " --configs " + bad + " --db " + db, true);
    EXPECT_EQ(r.status, 2) << text;
    EXPECT_NE(r.out.find(words), std::string::npos) << r.out;
  }
}

// The header's select() and the Launcher fall back, for a device the results
// do not know, to the most portable configuration, not to the one best most
// often (here every configuration wins once, so that was the smallest key).
TEST_F(Portability, UnknownDevicesGetTheMostPortableConfiguration) {
  std::vector<Raw> raw;
  for (const std::string& f : kFiles) raw.push_back(read_raw(f));
  std::sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) { return a.device < b.device; });
  const Direct d = direct(raw);
  ASSERT_EQ(d.portable, "256,2");

  ktune::db::StoreOptions ro;
  ro.read_only = true;
  ktune::db::Store store(db(), ro);
  const std::vector<ktune::db::DeployKernel> ks = ktune::db::collect_deploy(store, {});
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ktune::db::most_often_winner(ks[0]).config_key, "128,2");
  ASSERT_EQ(ks[0].portable.size(), 1u);
  EXPECT_EQ(ks[0].portable[0].config_key, d.portable);
  EXPECT_NEAR(ks[0].portable[0].worst, d.worst, 1e-12);
  EXPECT_NEAR(ks[0].portable[0].pp, d.pp, 1e-12);
  const ktune::db::DeploySelection sel = ktune::db::select_deploy(ks[0], "NVIDIA H100 80GB HBM3", 90, 16777216);
  EXPECT_EQ(sel.match, ktune::db::DeployMatch::MostPortable);
  EXPECT_EQ(sel.entry.config_key, "256,2");

  // The header, compiled: the same answer at compile time.
  ASSERT_EQ(ktune("export --format header -o " + dir.file("tuned.h") + " --db " + db()).status, 0);
  std::ofstream(dir.file("main.cpp")) << R"(#include "tuned.h"
namespace t = ktune_tuned::saxpy;
static_assert(t::select("NVIDIA H100 80GB HBM3", 90, 16777216).block_size_x == 256, "portable");
static_assert(t::select("NVIDIA H100 80GB HBM3", 90, 16777216).tile_size_x == 2, "portable");
static_assert(t::select(60, 1 << 20).block_size_x == 256, "portable, any size");
static_assert(t::most_often.block_size_x == 128, "the old fallback");
static_assert(t::select("NVIDIA RTX A5000", 86, 16777216).tile_size_x == 4, "same cc: the 3090");
int main() { return 0; }
)";
  EXPECT_EQ(shell("g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I" + dir.file("") + " " +
                  dir.file("main.cpp")), 0) << read_all(dir.file("tuned.h"));
  // Kernel Tuner's defines default to it too.
  ASSERT_EQ(ktune("export --format header --kernel-tuner-defines -o " + dir.file("kt.h") + " --db " + db()).status, 0);
  const std::string kt = read_all(dir.file("kt.h"));
  const std::string fallback = kt.substr(kt.find("#else\n"));
  EXPECT_EQ(fallback.substr(0, fallback.find("#endif")), "#else\n#define block_size_x 256\n#define tile_size_x 2\n");

  // The Launcher, from the database and from the JSON export.
  ASSERT_EQ(ktune("export --format json -o " + dir.file("tuned.json") + " --db " + db()).status, 0);
  EXPECT_NE(read_all(dir.file("tuned.json")).find("\"portable\""), std::string::npos);
  for (const std::string& results : {db(), dir.file("tuned.json")}) {
    ktune::LauncherOptions o;
    o.spec = (kData / "saxpy.yaml").string();
    o.results = results;
    o.report = {};
    ktune::Launcher l(o);
    const ktune::Choice c = l.choose({{"n", 16777216}}, "NVIDIA H100 80GB HBM3", 90);
    EXPECT_EQ(c.match, "most portable") << results;
    EXPECT_EQ(c.config_text(), "block_size_x=256, tile_size_x=2") << results;
    EXPECT_NE(c.source.find("4 device(s)"), std::string::npos) << c.source;
    EXPECT_EQ(l.choose({{"n", 16777216}}, "NVIDIA GeForce RTX 2080 Ti", 75).config_text(),
              "block_size_x=128, tile_size_x=2");
  }
}

}  // namespace
