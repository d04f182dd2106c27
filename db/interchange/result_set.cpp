#include "db/interchange/result_set.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <zlib.h>

#include "ktune/error.h"

namespace ktune::db {

bool take_observer_field(Evaluation& e, const std::string& name, double v) {
  for (const EvaluationField& f : evaluation_fields())
    if (is_observer(f) && name == f.kernel_tuner) {
      f.set(e, v);
      return true;
    }
  return false;
}

void for_each_observer_field(const Evaluation& e,
                             const std::function<void(const char*, double, const char*)>& out) {
  for (const EvaluationField& f : evaluation_fields())
    if (is_observer(f))
      if (std::optional<double> v = f.get(e)) out(f.kernel_tuner, *v, f.unit);
}

namespace {
bool value_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_float() < b.as_float();
  if (a.is_number() != b.is_number()) return a.is_number();
  return a.str() < b.str();
}
}  // namespace

std::vector<std::vector<Value>> parameter_domains(const ResultSet& rs) {
  if (rs.param_values.size() == rs.param_names.size() && !rs.param_names.empty()) return rs.param_values;
  std::vector<std::vector<Value>> out(rs.param_names.size());
  for (const Evaluation& e : rs.evaluations)
    for (size_t i = 0; i < out.size() && i < e.config.size(); ++i)
      if (std::find(out[i].begin(), out[i].end(), e.config[i]) == out[i].end()) out[i].push_back(e.config[i]);
  for (auto& d : out) std::stable_sort(d.begin(), d.end(), value_less);
  return out;
}

namespace {

// Caches are published gzipped (benchmark_hub's A100.json.gz); a gzip stream cut
// short (a copy interrupted like the run that wrote it) yields what it holds,
// and the readers treat that text as an interrupted file. What it expands to
// is bounded (kMaxGunzipped): a small file of zeros can expand a thousandfold.
std::string gunzip(const std::string& data, const std::string& path) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw Error::failed("cannot start zlib", SourceLocation{path});
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > kMaxGunzipped) {
      inflateEnd(&z);
      throw Error::bad_input("decompresses to more than " + std::to_string(kMaxGunzipped >> 20) +
                                 " MiB; decompress it and import the file itself",
                             SourceLocation{path});
    }
    if (rc == Z_STREAM_END && z.avail_in > 0) rc = inflateReset(&z);  // concatenated members, as gzip writes them
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;                  // cut short: keep what came out
  }
  std::string why = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (rc != Z_STREAM_END && rc != Z_BUF_ERROR && rc != Z_OK)
    throw Error::bad_input("not a readable gzip file (" + (why.empty() ? "zlib error" : why) + ")", SourceLocation{path});
  return out;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error::bad_input(std::string("cannot read the file: ") + std::strerror(errno), SourceLocation{path});
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string data = std::move(ss).str();
  const bool gzipped = data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
                       static_cast<unsigned char>(data[1]) == 0x8b;
  return gzipped ? gunzip(data, path) : data;
}

void write_text_file(const std::string& path, const std::string& text) {
  // Write beside and rename, so a failed export never leaves half a file.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error::bad_input("cannot write " + path + ": " + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) throw Error::failed("writing " + path + " failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error::failed("cannot write " + path + ": " + std::strerror(errno));
  }
}

}  // namespace ktune::db
