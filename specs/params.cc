// Encoding, formatting and parsing of parameter values.
#include "specs/params.h"

#include <charconv>
#include <cstring>

namespace verisub::specs {

// A permutation of rank r (r <= kMaxRank) is r in the low 4 bits and 4 bits per entry above.
int64_t EncodePerm(const std::vector<int>& perm) {
  int64_t code = static_cast<int64_t>(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    code |= static_cast<int64_t>(perm[i] & 0xF) << (4 * (i + 1));
  return code;
}

std::vector<int> DecodePerm(int64_t code) {
  int r = static_cast<int>(code & 0xF);
  if (r > kMaxRank) r = kMaxRank;
  std::vector<int> perm(r);
  for (int i = 0; i < r; ++i) perm[i] = static_cast<int>((code >> (4 * (i + 1))) & 0xF);
  return perm;
}

int64_t EncodeFloat(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

double DecodeFloat(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

namespace {

std::string FormatList(const std::vector<int64_t>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? "," : "") + std::to_string(xs[i]);
  return s + "]";
}

StatusOr<std::vector<int64_t>> ParseList(std::string_view t) {
  if (t.size() < 2 || t.front() != '[' || t.back() != ']')
    return InvalidArgument("expected a list like [1,0], got '" + std::string(t) + "'");
  std::vector<int64_t> out;
  t = t.substr(1, t.size() - 2);
  while (!t.empty()) {
    size_t comma = t.find(',');
    std::string_view item = t.substr(0, comma);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || ptr != item.data() + item.size())
      return InvalidArgument("bad list element '" + std::string(item) + "'");
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    t = t.substr(comma + 1);
  }
  return out;
}

}  // namespace

std::string FormatParamValue(const ParamDesc& d, const Params& p) {
  int64_t v = p[d.slot];
  switch (d.type) {
    case ParamType::kInt:
    case ParamType::kEnum:
      for (const auto& [value, name] : d.names)
        if (value == v) return name;
      return std::to_string(v);
    case ParamType::kPerm: {
      std::vector<int64_t> xs;
      for (int x : DecodePerm(v)) xs.push_back(x);
      return FormatList(xs);
    }
    case ParamType::kShape: {
      std::vector<int64_t> xs(p.v.begin() + d.slot + 1, p.v.begin() + d.slot + 1 + v);
      return FormatList(xs);
    }
    case ParamType::kFloat: {
      char buf[64];
      auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, DecodeFloat(v));
      return std::string(buf, ptr);
    }
  }
  return "?";
}

Status ParseParamValue(const ParamDesc& d, std::string_view text, Params* p) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("parameter '" + d.name + "': " + why);
  };
  switch (d.type) {
    case ParamType::kInt:
    case ParamType::kEnum: {
      for (const auto& [value, name] : d.names) {
        if (name == text) {
          (*p)[d.slot] = value;
          return Status::Ok();
        }
      }
      if (d.type == ParamType::kEnum) {
        std::string allowed;
        for (const auto& [value, name] : d.names) allowed += (allowed.empty() ? "" : "|") + name;
        return bad("unknown value '" + std::string(text) + "' (allowed: " + allowed + ")");
      }
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size())
        return bad("expected an integer, got '" + std::string(text) + "'");
      (*p)[d.slot] = v;
      return CheckParamValue(d, *p);
    }
    case ParamType::kPerm: {
      auto xs = ParseList(text);
      if (!xs.ok()) return bad(xs.status().message());
      std::vector<int> perm(xs->begin(), xs->end());
      if (perm.size() > static_cast<size_t>(kMaxRank)) return bad("permutation too long");
      (*p)[d.slot] = EncodePerm(perm);
      return CheckParamValue(d, *p);
    }
    case ParamType::kShape: {
      auto xs = ParseList(text);
      if (!xs.ok()) return bad(xs.status().message());
      if (xs->size() > static_cast<size_t>(kMaxRank)) return bad("shape has too many dimensions");
      (*p)[d.slot] = static_cast<int64_t>(xs->size());
      for (size_t i = 0; i < xs->size(); ++i) (*p)[d.slot + 1 + i] = (*xs)[i];
      return CheckParamValue(d, *p);
    }
    case ParamType::kFloat: {
      double v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size())
        return bad("expected a number, got '" + std::string(text) + "'");
      (*p)[d.slot] = EncodeFloat(v);
      return Status::Ok();
    }
  }
  return bad("unknown parameter type");
}

Status CheckParamValue(const ParamDesc& d, const Params& p) {
  int64_t v = p[d.slot];
  auto bad = [&](const std::string& why) {
    return InvalidArgument("parameter '" + d.name + "': " + why);
  };
  switch (d.type) {
    case ParamType::kInt:
      for (const auto& nv : d.names)
        if (nv.first == v) return Status::Ok();
      if (v < d.min_value)
        return bad("value " + std::to_string(v) + " is below the minimum " +
                   std::to_string(d.min_value));
      return Status::Ok();
    case ParamType::kEnum:
      for (const auto& nv : d.names)
        if (nv.first == v) return Status::Ok();
      return bad("value " + std::to_string(v) + " is not one of its names");
    case ParamType::kPerm: {
      std::vector<int> perm = DecodePerm(v);
      std::vector<bool> seen(perm.size(), false);
      for (int x : perm) {
        if (x < 0 || x >= static_cast<int>(perm.size()) || seen[x])
          return bad("not a permutation: " + FormatParamValue(d, p));
        seen[x] = true;
      }
      return Status::Ok();
    }
    case ParamType::kShape:
      if (v < 0 || v > kMaxRank) return bad("bad rank " + std::to_string(v));
      for (int i = 0; i < v; ++i)
        if (p[d.slot + 1 + i] < -1) return bad("bad dimension in " + FormatParamValue(d, p));
      return Status::Ok();
    case ParamType::kFloat:
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace verisub::specs
