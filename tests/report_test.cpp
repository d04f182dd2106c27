// `ktune report`: one self-contained HTML page (nothing fetched, no script)
// with its plots, rendered in headless Chromium where one is installed
// (scripts/setup.sh installs it when apt can): the browser's DOM holds every
// plot, and its screenshot shows the histogram bars and the heatmap drawn.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(KTUNE_TESTS_DIR) / "data" / "portability";

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

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// $KTUNE_CHROMIUM, else chromium, chromium-browser or google-chrome on PATH.
std::optional<std::string> chromium() {
  if (const char* env = std::getenv("KTUNE_CHROMIUM"); env && *env) return std::string(env);
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (shell(std::string("command -v ") + name + " >/dev/null 2>&1") == 0) return std::string(name);
  return std::nullopt;
}

// An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) as RGB pixels.
struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  size_t count(uint8_t r, uint8_t g, uint8_t b) const {
    size_t n = 0;
    for (size_t i = 0; i + 2 < rgb.size(); i += 3) n += rgb[i] == r && rgb[i + 1] == g && rgb[i + 2] == b;
    return n;
  }
};

uint32_t be32(const std::string& s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 | uint32_t(uint8_t(s[at + 2])) << 8 |
         uint32_t(uint8_t(s[at + 3]));
}

std::optional<Image> read_png(const std::string& file) {
  const std::string s = read_all(file);
  if (s.size() < 33 || s.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return std::nullopt;
  Image img;
  int channels = 0;
  std::string idat;
  for (size_t at = 8; at + 8 <= s.size();) {
    const uint32_t len = be32(s, at);
    const std::string type = s.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = be32(s, at + 8);
      img.height = be32(s, at + 12);
      const int depth = uint8_t(s[at + 16]), colour = uint8_t(s[at + 17]), interlace = uint8_t(s[at + 20]);
      if (depth != 8 || interlace != 0 || (colour != 2 && colour != 6)) return std::nullopt;
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += s.substr(at + 8, len);
    }
    at += 12 + len;
  }
  if (!channels) return std::nullopt;
  const size_t stride = size_t(img.width) * size_t(channels);
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_len != raw.size())
    return std::nullopt;
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  img.rgb.reserve(size_t(img.width) * img.height * 3);
  for (uint32_t y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(channels) ? cur[x - channels] : 0, b = prev[x],
                c = x >= size_t(channels) ? prev[x - channels] : 0;
      int p = 0;
      switch (filter) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = b; break;
        case 3: p = (a + b) / 2; break;
        case 4: {
          const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
          p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: return std::nullopt;
      }
      cur[x] = uint8_t(in[x] + p);
    }
    for (uint32_t x = 0; x < img.width; ++x)
      for (int k = 0; k < 3; ++k) img.rgb.push_back(cur[x * size_t(channels) + size_t(k)]);
    std::swap(prev, cur);
  }
  return img;
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string files;
    for (const char* f : {"rtx3090.json", "rtx2080ti.json", "a100.json", "a4000.json"})
      files.append(" ").append((kData / f).string());
    ASSERT_EQ(shell(std::string(KTUNE_BINARY) + " import" + files + " --db " + dir.file("r.db") + " >/dev/null"), 0);
    ASSERT_EQ(shell(std::string(KTUNE_BINARY) + " report --db " + dir.file("r.db") + " -o " + html() + " >/dev/null"),
              0);
  }
  std::string html() const { return dir.file("report.html"); }
  ktune::testing::TempDir dir;
};

TEST_F(Report, OneSelfContainedPageWithEveryPlot) {
  const std::string page = read_all(html());
  // Nothing fetched, nothing run: no script, stylesheet link, image source or
  // URL but SVG's namespace name.
  EXPECT_EQ(count(page, "<script"), 0u);
  EXPECT_EQ(count(page, "<link"), 0u);
  EXPECT_EQ(count(page, " src="), 0u);
  EXPECT_EQ(count(page, "http"), count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  // Per device: a histogram, a convergence plot, one effect plot per
  // parameter; one portability heatmap with 4x4 cells and the portable row.
  EXPECT_EQ(count(page, "<svg class=\"plot histogram\""), 4u);
  EXPECT_EQ(count(page, "<svg class=\"plot convergence\""), 4u);
  EXPECT_EQ(count(page, "<svg class=\"plot effect\""), 8u);
  EXPECT_EQ(count(page, "<svg class=\"plot heatmap\""), 1u);
  EXPECT_EQ(count(page, "<rect class=\"cell\""), 20u);
  EXPECT_EQ(count(page, ">not measured<"), 2u);
  EXPECT_EQ(count(page, "<polyline class=\"random\""), 4u);
  EXPECT_EQ(count(page, "<polyline class=\"run\""), 4u);
  // Devices named as stored; the most portable configuration named.
  EXPECT_NE(page.find("<h3 id=\"saxpy--16777216--NVIDIA-GeForce-RTX-2080-Ti\">NVIDIA GeForce RTX 2080 Ti (sm_75)"),
            std::string::npos);
  EXPECT_NE(page.find("Most portable configuration, of the 22 measured on every device: <b>256,2</b>"),
            std::string::npos);
  // The same database gives the same page.
  ASSERT_EQ(shell(std::string(KTUNE_BINARY) + " report --db " + dir.file("r.db") + " -o " + dir.file("again.html") +
                  " >/dev/null"), 0);
  EXPECT_EQ(read_all(dir.file("again.html")), page);
  // Bad input: an unknown kernel is exit 2.
  EXPECT_EQ(shell(std::string(KTUNE_BINARY) + " report --kernel nope --db " + dir.file("r.db") + " -o " +
                  dir.file("x.html") + " 2>/dev/null"), 2);
}

TEST_F(Report, HeadlessChromiumDrawsThePlots) {
  const std::optional<std::string> browser = chromium();
  if (!browser)
    GTEST_SKIP() << "no chromium: scripts/setup.sh installs Debian's chromium where apt can (optional, about "
                    "25 packages); KTUNE_CHROMIUM names another browser binary";
  const std::string common = *browser + " --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=" +
                             dir.file("profile") + " --window-size=1300,1700 ";
  // The DOM the browser built: every plot is an SVG element with its shapes.
  ASSERT_EQ(shell("timeout 120 " + common + "--dump-dom file://" + html() + " > " + dir.file("dom.html") +
                  " 2>/dev/null"), 0);
  const std::string dom = read_all(dir.file("dom.html"));
  EXPECT_EQ(count(dom, "<svg class=\"plot"), 17u) << dom.substr(0, 500);
  EXPECT_EQ(count(dom, "<rect class=\"cell\""), 20u);
  EXPECT_GE(count(dom, "<rect class=\"bar\""), 4u * 5);
  // The screenshot: the histogram bars and the heatmap's cells are drawn in
  // their colours (the page's top shows the heatmap and the first device).
  ASSERT_EQ(shell("timeout 120 " + common + "--screenshot=" + dir.file("page.png") + " file://" + html() +
                  " >/dev/null 2>&1"), 0);
  const std::optional<Image> img = read_png(dir.file("page.png"));
  ASSERT_TRUE(img) << "cannot read " << dir.file("page.png");
  EXPECT_EQ(img->width, 1300u);
  EXPECT_GT(img->count(0x4c, 0x78, 0xa8), 5000u) << "histogram bars";
  EXPECT_GT(img->count(0xd9, 0xd9, 0xd9), 2000u) << "the unmeasured cells";
  EXPECT_GT(img->count(0xe8, 0xf5, 0xe9), 2000u) << "the diagonal's ratio-1 cells";
  if (const char* keep = std::getenv("KTUNE_REPORT_SCREENSHOT"); keep && *keep)
    fs::copy_file(dir.file("page.png"), keep, fs::copy_options::overwrite_existing);
}

}  // namespace
