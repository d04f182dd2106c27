#include "tuner/compile/cubin_info.h"

#include <cstdint>
#include <cstring>

namespace ktune {
namespace {

// EIATTR codes of the .nv.info attribute lists (stable across CUDA releases;
// cuobjdump -elf prints them by these names).
constexpr std::uint8_t kMaxThreads = 0x05;
constexpr std::uint8_t kReqNtid = 0x10;
constexpr std::uint8_t kFrameSize = 0x11;
constexpr std::uint8_t kMinStackSize = 0x12;
constexpr std::uint8_t kCbankParamSize = 0x19;
constexpr std::uint8_t kMaxRegCount = 0x1b;
constexpr std::uint8_t kRegCount = 0x2f;
// Attribute formats: NVAL has no value, BVAL/HVAL keep theirs in the 16-bit
// field, SVAL has a 16-bit size followed by that many bytes.
constexpr std::uint8_t kFormatSval = 0x04;

// The reserved window sm_90+ cubins put at the start of every kernel's shared
// section (the driver accounts for it separately as reserved shared memory).
constexpr std::size_t kReservedSmemWindow = 1024;

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
};

struct Attribute {
  std::uint8_t format = 0;
  std::uint8_t code = 0;
  std::uint16_t value = 0;       // HVAL/BVAL value, or SVAL size
  std::string_view data;         // SVAL payload
};

template <typename T>
T load(std::string_view bytes, std::size_t at) {
  T v{};
  std::memcpy(&v, bytes.data() + at, sizeof v);  // cubins are little-endian, as is every host we run on
  return v;
}

// A read-only view of a little-endian ELF64 file with bounds-checked access.
class Elf {
 public:
  explicit Elf(std::string_view bytes) : bytes_(bytes) {}

  bool parse(std::string* error) {
    if (bytes_.size() < 64 || bytes_.substr(0, 4) != "\x7f" "ELF" || bytes_[4] != 2 || bytes_[5] != 1) {
      return fail(error, "not a 64-bit little-endian ELF file");
    }
    auto shoff = load<std::uint64_t>(bytes_, 0x28);
    auto shentsize = load<std::uint16_t>(bytes_, 0x3a);
    auto shnum = load<std::uint16_t>(bytes_, 0x3c);
    auto shstrndx = load<std::uint16_t>(bytes_, 0x3e);
    if (shentsize < 64 || shstrndx >= shnum || shoff > bytes_.size() ||
        std::uint64_t{shnum} * shentsize > bytes_.size() - shoff) {
      return fail(error, "truncated ELF section table");
    }
    sections_.resize(shnum);
    std::vector<std::uint32_t> name_offsets(shnum);
    for (std::size_t i = 0; i < shnum; ++i) {
      std::size_t at = shoff + i * shentsize;
      name_offsets[i] = load<std::uint32_t>(bytes_, at);
      sections_[i].type = load<std::uint32_t>(bytes_, at + 4);
      sections_[i].offset = load<std::uint64_t>(bytes_, at + 0x18);
      sections_[i].size = load<std::uint64_t>(bytes_, at + 0x20);
      sections_[i].link = load<std::uint32_t>(bytes_, at + 0x28);
    }
    std::string_view names = contents(sections_[shstrndx]);
    for (std::size_t i = 0; i < shnum; ++i) sections_[i].name = std::string(c_string(names, name_offsets[i]));
    return true;
  }

  const Section* find(std::string_view name) const {
    for (const Section& s : sections_) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  const std::vector<Section>& sections() const { return sections_; }

  // Bytes of a section with file contents; empty for NOBITS or out-of-range.
  std::string_view contents(const Section& s) const {
    constexpr std::uint32_t kNoBits = 8;
    if (s.type == kNoBits || s.offset > bytes_.size() || s.size > bytes_.size() - s.offset) return {};
    return bytes_.substr(s.offset, s.size);
  }

  // Index of the symbol called `name` in the symbol table section, or -1.
  long symbol_index(const Section& symtab, std::string_view name) const {
    if (symtab.link >= sections_.size()) return -1;
    std::string_view syms = contents(symtab);
    std::string_view strings = contents(sections_[symtab.link]);
    constexpr std::size_t kSymSize = 24;
    for (std::size_t i = 0; (i + 1) * kSymSize <= syms.size(); ++i) {
      if (c_string(strings, load<std::uint32_t>(syms, i * kSymSize)) == name) return static_cast<long>(i);
    }
    return -1;
  }

 private:
  static std::string_view c_string(std::string_view table, std::size_t at) {
    if (at >= table.size()) return {};
    std::string_view rest = table.substr(at);
    return rest.substr(0, rest.find('\0'));
  }
  static bool fail(std::string* error, const char* why) {
    if (error) *error = why;
    return false;
  }

  std::string_view bytes_;
  std::vector<Section> sections_;
};

std::vector<Attribute> attributes(std::string_view info) {
  std::vector<Attribute> out;
  std::size_t at = 0;
  while (at + 4 <= info.size()) {
    Attribute a;
    a.format = static_cast<std::uint8_t>(info[at]);
    a.code = static_cast<std::uint8_t>(info[at + 1]);
    a.value = load<std::uint16_t>(info, at + 2);
    at += 4;
    if (a.format == kFormatSval) {
      if (a.value > info.size() - at) break;  // truncated: keep what was whole
      a.data = info.substr(at, a.value);
      at += a.value;
    }
    out.push_back(a);
  }
  return out;
}

std::uint32_t word(std::string_view data, std::size_t index) {
  return (index + 1) * 4 <= data.size() ? load<std::uint32_t>(data, index * 4) : 0;
}

// Per-kernel attributes live in .nv.info.<kernel>.
void read_kernel_info(std::string_view info, KernelResources& r) {
  for (const Attribute& a : attributes(info)) {
    if ((a.code == kMaxThreads || a.code == kReqNtid) && a.data.size() >= 12) {
      int threads = static_cast<int>(word(a.data, 0) * word(a.data, 1) * word(a.data, 2));
      if (r.launch_bound_threads == 0 || threads < r.launch_bound_threads) r.launch_bound_threads = threads;
    } else if (a.code == kMaxRegCount && a.format != kFormatSval) {
      r.max_registers = a.value;
    } else if (a.code == kCbankParamSize && a.format != kFormatSval) {
      r.param_bytes = a.value;
    }
  }
}

// Module-wide .nv.info holds (symbol index, value) pairs for every function.
void read_module_info(std::string_view info, std::uint32_t symbol, KernelResources& r) {
  for (const Attribute& a : attributes(info)) {
    if (a.format != kFormatSval || a.data.size() < 8 || word(a.data, 0) != symbol) continue;
    std::uint32_t v = word(a.data, 1);
    if (a.code == kRegCount) r.registers = static_cast<int>(v);
    if (a.code == kFrameSize) r.local_bytes = v;
    if (a.code == kMinStackSize) r.stack_bytes = v;
  }
}

bool is_user_constant_bank(std::string_view name) {
  // ".nv.constant<N>" with no kernel suffix holds __constant__ variables; bank
  // 0 is per kernel (parameters), others with a suffix are compiler literals.
  constexpr std::string_view prefix = ".nv.constant";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return false;
  std::string_view bank = name.substr(prefix.size());
  return bank != "0" && bank.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::optional<KernelResources> read_kernel_resources(std::string_view cubin, std::string_view kernel,
                                                     std::string* error) {
  Elf elf(cubin);
  if (!elf.parse(error)) return std::nullopt;
  std::string name(kernel);
  const Section* kernel_info = elf.find(".nv.info." + name);
  if (kernel_info == nullptr) {
    if (error) *error = "kernel '" + name + "' is not in the cubin";
    return std::nullopt;
  }
  KernelResources r;
  read_kernel_info(elf.contents(*kernel_info), r);
  const Section* module_info = elf.find(".nv.info");
  if (module_info != nullptr && module_info->link < elf.sections().size()) {
    long symbol = elf.symbol_index(elf.sections()[module_info->link], name);
    if (symbol >= 0) read_module_info(elf.contents(*module_info), static_cast<std::uint32_t>(symbol), r);
  }
  if (const Section* shared = elf.find(".nv.shared." + name)) {
    r.static_smem = shared->size;
    if (elf.find(".nv.shared.reserved.0") != nullptr) {
      r.static_smem -= std::min<std::size_t>(r.static_smem, kReservedSmemWindow);
    }
  }
  for (const Section& s : elf.sections()) {
    if (is_user_constant_bank(s.name)) r.const_bytes += s.size;
  }
  return r;
}

std::vector<std::string> cubin_kernel_names(std::string_view cubin) {
  Elf elf(cubin);
  std::vector<std::string> names;
  if (!elf.parse(nullptr)) return names;
  constexpr std::string_view prefix = ".nv.info.";
  for (const Section& s : elf.sections()) {
    if (s.name.starts_with(prefix)) names.push_back(s.name.substr(prefix.size()));
  }
  return names;
}

namespace {

// The integer just before `suffix` in `line` ("2048 bytes stack frame"), or -1.
long number_before(std::string_view line, std::string_view suffix) {
  std::size_t at = line.find(suffix);
  if (at == std::string_view::npos) return -1;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == end) return -1;
  return std::stol(std::string(line.substr(begin, end - begin)));
}

std::string_view quoted_or_rest(std::string_view line, std::string_view marker) {
  std::string_view rest = line.substr(line.find(marker) + marker.size());
  if (!rest.empty() && rest.front() == '\'') {
    rest.remove_prefix(1);
    return rest.substr(0, rest.find('\''));
  }
  return rest.substr(0, rest.find_first_of(" \r"));
}

}  // namespace

std::map<std::string, PtxasUsage> parse_ptxas_log(std::string_view log) {
  std::map<std::string, PtxasUsage> out;
  std::string entry;       // function named by the last "Compiling entry function"
  std::string properties;  // function named by the last "Function properties for"
  constexpr std::string_view kEntry = "Compiling entry function ";
  constexpr std::string_view kProps = "Function properties for ";
  while (!log.empty()) {
    std::string_view line = log.substr(0, log.find('\n'));
    log.remove_prefix(std::min(log.size(), line.size() + 1));
    if (line.find(kEntry) != std::string_view::npos) {
      entry = std::string(quoted_or_rest(line, kEntry));
    } else if (line.find(kProps) != std::string_view::npos) {
      properties = std::string(quoted_or_rest(line, kProps));
    } else if (line.find("bytes stack frame") != std::string_view::npos && !properties.empty()) {
      PtxasUsage& u = out[properties];
      u.stack_frame = number_before(line, " bytes stack frame");
      u.spill_stores = number_before(line, " bytes spill stores");
      u.spill_loads = number_before(line, " bytes spill loads");
    } else if (line.find("Used ") != std::string_view::npos && !entry.empty()) {
      PtxasUsage& u = out[entry];
      u.registers = static_cast<int>(number_before(line, " registers"));
      u.barriers = static_cast<int>(number_before(line, " barriers"));
      u.smem = std::max(0L, number_before(line, " bytes smem"));
    }
  }
  return out;
}

}  // namespace ktune
