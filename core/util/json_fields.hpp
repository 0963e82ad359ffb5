// The JSON form of a struct whose fields are listed once: a `fields(r, f)` function calls
// f(key, member) (or f(key, member, kOmitEmpty)) for every member, and write_fields /
// read_fields turn that list into to_json and from_json. record/records.hpp, the summary and
// the decision are written this way, so that a key is spelt in one place and a misspelt member
// is a compile error.
//
// Rules: a std::optional member is written only when present and read only when present and
// not null; a member passed with kOmitEmpty is written only when it is not empty (a container,
// a string) or not false (a bool); every other member is always written. Reading leaves a
// member whose key is absent as it was.
#pragma once
#include <concepts>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

namespace kq::jf {

using nlohmann::json;

struct OmitEmpty {};
inline constexpr OmitEmpty kOmitEmpty{};

template <class T>
void put(json& j, const char* key, const T& v) {
  j[key] = v;
}
template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
void put(json& j, const char* key, const T& v, OmitEmpty) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v) j[key] = v;
  } else {
    if (!v.empty()) j[key] = v;
  }
}

template <class T>
void get(const json& j, const char* key, T& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) it->get_to(v);
}
template <class T>
void get(const json& j, const char* key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) v = it->template get<T>();
}
template <class T>
void get(const json& j, const char* key, T& v, OmitEmpty) {
  get(j, key, v);
}

// to_json and from_json of a struct with a fields() function found by argument-dependent lookup
// (declared in the struct's own namespace, not an unnamed one). A key may be another type than a
// string where put() and get() are overloaded for it (decision.hpp writes a speed-up under three
// keys).
template <class R>
void write_fields(json& j, const R& r) {
  j = json::object();
  fields(r, [&](const auto& key, const auto&... v) { put(j, key, v...); });
}
template <class R>
void read_fields(const json& j, R& r) {
  fields(r, [&](const auto& key, auto&... v) { get(j, key, v...); });
}

}  // namespace kq::jf

// Declares T's field list: `KQ_JSON_FIELDS(T) { f("key", r.member); ... }`, one function for the
// const (writing) and the mutable (reading) struct.
#define KQ_JSON_FIELDS(T)                          \
  template <class R, class F>                      \
  requires std::same_as<std::remove_const_t<R>, T> \
  void fields(R& r, F&& f)
