// Private to tuner/spec/: what the YAML and T1 readers share once a
// document has been read. A reader fills a Draft (the Spec with its
// expressions parsed but not yet compiled, and the parameters); finish_spec()
// then builds the search space, compiles every expression against parameters
// and constants (so an unknown name is reported where it was written),
// checks cross-references and computes the hashes.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "search/space/space.h"
#include "tuner/spec/spec.h"
#include "tuner/spec/doc.h"

namespace ktune::spec_detail {

struct Draft {
  struct Override {
    std::string name;
    Value value;
    bool used = false;
  };
  Spec spec;
  std::vector<Override> overrides;  // ConstantOverrides, marked as they are applied
  std::vector<Parameter> params;
  std::vector<SourceLocation> param_name_where;  // parallel to params
  SourceLocation objective_where;
  bool objective_named = false;  // the file names its objective (T1: General.Objective)
  std::set<std::string> t1_noted;  // (context, key) pairs already noted by t1_map
  // spec.constants by name, extended as constants are added (see eval_constant).
  mutable std::map<std::string, Value, std::less<>> constant_index;
  mutable size_t constants_indexed = 0;
};

using ConstantMap = std::map<std::string, Value, std::less<>>;
ConstantMap constant_map(const Spec& spec);

// The value a constant gets: an override's when there is one, else `own`.
Value constant_value(Draft& draft, const std::string& name, Value own);

// Evaluates an expression over the constants declared so far; errors name its
// location. Only the constants it names are handed over, found through an
// index of them, so that a spec of many constants loads in linear time.
Value eval_constant(const expr::Expression& e, const Draft& draft);

// "float", "int32", "half", "bf16", ... and the aliases docs/spec.md lists.
std::optional<ElemType> elem_type_from_name(std::string_view name);
// The same, also taking CUDA's vector types (float2, int4, double2, half2,
// ...): `components` gets their lane count (1 for a scalar type).
std::optional<ElemType> elem_type_with_lanes(std::string_view name, int& components);

// Checks the arguments against the kernel's parameters as its source declares
// them (signature.cpp): a kernel or reference kernel the source does not
// define, a count, a pointer/scalar or a scalar-width mismatch makes the spec
// not runnable (require_runnable() refuses it before anything compiles); a
// buffer's element type differing from the pointee is a note.
void check_kernel_signature(Draft& draft);
// A scalar converted to an element type: integers must be integral and in
// range; floats accept any number. Errors name `what` at `where`.
Value coerce_to_elem(const Value& v, ElemType t, const SourceLocation& where, std::string_view what);

// Requires a C identifier (a name expressions and -D can use).
void require_identifier(const std::string& name, const SourceLocation& where, std::string_view what);

// NaN and infinities are refused as parameter values (with `what` and `where`).
void require_finite(const Value& v, const SourceLocation& where, std::string_view what);

// A parameter's value list: every element a scalar (int, float, bool or
// string); ints and floats may mix (type float), other kinds may not.
Parameter make_parameter(const std::string& name, std::vector<Value> values, const SourceLocation& where,
                         const SourceLocation& values_where);

// A path relative to the spec's folder, made absolute.
std::string resolve_path(const std::string& dir, const std::string& path);
// A file only compiling or launching reads: false, with the file recorded in
// Spec::not_runnable and a note, when it does not exist.
bool file_for_gpu(const std::string& path, const SourceLocation& where, std::string_view what, Draft& draft);
// Whether the kernel source was not found (file_for_gpu recorded it).
bool kernel_source_missing(const Spec& spec);
// A grid and block of one thread, no shared memory: the geometry of a spec
// whose kernel is never launched (no KernelSpecification, or one whose own
// geometry cannot be read while its Language rules launching out).
void unit_geometry(Spec& spec);
// A file's text; a missing or unreadable file is bad input at `where`.
std::string read_text_file(const std::string& path, const SourceLocation& where, std::string_view what);

// A duration: a number of seconds or a string "90s", "10m", "1.5h", "500ms".
double need_duration(const Doc& d, std::string_view what);
// A scalar or a list of them, as a Value (strategy options kept verbatim).
Value doc_to_value(const Doc& d, std::string_view what);

// The two readers: fill draft.spec and draft.params from a document.
void read_yaml_spec(const Doc& root, Draft& draft);
void read_t1_spec(const Doc& root, Draft& draft);
// YAML `arguments` and `verify` (yaml_args.cpp).
void read_yaml_arguments(const Doc& d, Draft& draft);
void read_yaml_verify(const Doc& d, Draft& draft);
// An argument's own atol or rtol needs a verify section to apply to.
void require_verify_for_tolerances(const Draft& draft);
// T1 `KernelSpecification` (t1_kernel.cpp).
void read_t1_kernel(const Doc& d, Draft& draft);
// A T1 file without KernelSpecification (BAT's draft layouts): a space with no
// kernel, which require_runnable() stops before anything compiles.
void no_t1_kernel(const Doc& root, Draft& draft);

// A T1 map with its keys matched to `known` (t1_keys.cpp): a key that
// differs from a known one only in case, '_' or '-', or that is an alias
// (another spelling published files use), is renamed to the known key with a
// note; any other key is dropped with a note naming its location (once per
// context and key). Two keys giving the same known key are bad input.
struct T1Alias {
  std::string_view spelling;
  std::string_view key;
};
Doc t1_map(const Doc& d, std::initializer_list<std::string_view> known, std::initializer_list<T1Alias> aliases,
           std::string_view context, Draft& draft);
// A T1 enumeration value compared as t1_map compares keys ("random" is "Random").
bool t1_word_is(const std::string& value, std::string_view word);

void finish_spec(Draft& draft);

// The canonical form hashed into Spec::hash (hash.cpp).
std::string canonical_text(const Spec& spec);

}  // namespace ktune::spec_detail
