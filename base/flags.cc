// Flags: parse, check and describe a program's command line.
#include "base/flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

namespace verisub::base {

struct Flags::Flag {
  enum class Kind {
    kBool,
    kInt,
    kInt64,
    kUint64,
    kDouble,
    kString,
    kPath,
    kEnum,
    kRepeated,
    kPair
  };
  std::string name;
  std::vector<std::string> aliases;
  Kind kind = Kind::kBool;
  void* target = nullptr;
  void* second = nullptr;  // kPair: where the second value goes
  int64_t min = 0, max = 0;
  double dmin = 0, dmax = 0;
  std::vector<std::string> choices;
  std::string value_name;  // shown in help: --budget N
  std::string range;       // shown in help and in errors: "an integer in [0, 10]"
  std::string help;
  std::string default_text;  // empty: none shown
  bool set = false;
};

struct Flags::Pos {
  std::string name;
  std::string help;
  std::string* value = nullptr;
  std::vector<std::string>* values = nullptr;
  bool required = false;
};

namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string FormatDouble(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

constexpr size_t kHelpColumns = 100;

// `text` broken at spaces into lines of at most `columns` (the first one already has `indent`
// characters before it), continuation lines indented by `indent`.
std::string Wrap(const std::string& text, size_t indent, size_t columns) {
  std::string out;
  size_t used = indent;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (used > indent && used + 1 + word.size() > columns) {
      out += "\n" + std::string(indent, ' ');
      used = indent;
    } else if (used > indent) {
      out += ' ';
      ++used;
    }
    out += word;
    used += word.size();
    pos = end + 1;
  }
  return out;
}

template <typename T>
bool ParseWhole(const std::string& text, T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

Flags::Flags(std::string program, std::string synopsis, std::string epilog)
    : program_(std::move(program)), synopsis_(std::move(synopsis)), epilog_(std::move(epilog)) {}

Flags::~Flags() = default;

Flags::Flag& Flags::Add(const std::string& name, const std::string& help) {
  VERISUB_CHECK(!name.empty() && name[0] == '-');
  VERISUB_CHECK(Find(name) == nullptr);
  flags_.push_back(std::make_unique<Flag>());
  Flag& f = *flags_.back();
  f.name = name;
  f.help = help;
  return f;
}

Flags::Flag* Flags::Find(const std::string& name) {
  for (auto& f : flags_) {
    if (f->name == name) return f.get();
    for (const std::string& a : f->aliases)
      if (a == name) return f.get();
  }
  return nullptr;
}

const Flags::Flag* Flags::Find(const std::string& name) const {
  return const_cast<Flags*>(this)->Find(name);
}

Flags& Flags::Bool(const std::string& name, bool* value, const std::string& help) {
  Flag& f = Add(name, help);
  f.kind = Flag::Kind::kBool;
  f.target = value;
  return *this;
}

Flags::Flag& Flags::AddInteger(const std::string& name, void* target, int64_t min, int64_t max,
                               int64_t value, const std::string& help) {
  Flag& f = Add(name, help);
  f.target = target;
  f.min = min;
  f.max = max;
  f.value_name = "N";
  f.range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  f.default_text = std::to_string(value);
  return f;
}

Flags& Flags::Int(const std::string& name, int* value, int min, int max, const std::string& help) {
  AddInteger(name, value, min, max, *value, help).kind = Flag::Kind::kInt;
  return *this;
}

Flags& Flags::Int64(const std::string& name, int64_t* value, int64_t min, int64_t max,
                    const std::string& help) {
  AddInteger(name, value, min, max, *value, help).kind = Flag::Kind::kInt64;
  return *this;
}

Flags& Flags::Uint64(const std::string& name, uint64_t* value, const std::string& help) {
  Flag& f = Add(name, help);
  f.kind = Flag::Kind::kUint64;
  f.target = value;
  f.value_name = "N";
  f.range = "an integer in [0, " + std::to_string(std::numeric_limits<uint64_t>::max()) + "]";
  f.default_text = std::to_string(*value);
  return *this;
}

Flags& Flags::Double(const std::string& name, double* value, double min, double max,
                     const std::string& help) {
  Flag& f = Add(name, help);
  f.kind = Flag::Kind::kDouble;
  f.target = value;
  f.dmin = min;
  f.dmax = max;
  f.value_name = "X";
  f.range = std::isinf(max) ? "a number >= " + FormatDouble(min)
                            : "a number in [" + FormatDouble(min) + ", " + FormatDouble(max) + "]";
  f.default_text = FormatDouble(*value);
  return *this;
}

Flags& Flags::Threads(const std::string& name, int* value, int min, const std::string& help) {
  Int(name, value, min, MaxThreads(), help);
  Flag& f = *flags_.back();
  f.range = "a thread count in [" + std::to_string(min) + ", " + std::to_string(MaxThreads()) +
            "], at most 4 x the " + std::to_string(std::thread::hardware_concurrency()) +
            " hardware threads";
  return *this;
}

Flags& Flags::String(const std::string& name, std::string* value, const std::string& value_name,
                     const std::string& help) {
  Flag& f = Add(name, help);
  f.kind = Flag::Kind::kString;
  f.target = value;
  f.value_name = value_name;
  f.default_text = *value;
  return *this;
}

Flags& Flags::Path(const std::string& name, std::string* value, const std::string& help) {
  String(name, value, "PATH", help);
  flags_.back()->kind = Flag::Kind::kPath;
  return *this;
}

Flags& Flags::Enum(const std::string& name, std::string* value, std::vector<std::string> choices,
                   const std::string& help) {
  Flag& f = Add(name, help);
  f.kind = Flag::Kind::kEnum;
  f.target = value;
  f.choices = std::move(choices);
  for (const std::string& c : f.choices) f.value_name += (f.value_name.empty() ? "" : "|") + c;
  f.range = "one of " + f.value_name;
  f.default_text = *value;
  return *this;
}

Flags& Flags::Repeated(const std::string& name, std::vector<std::string>* values,
                       const std::string& value_name, const std::string& help) {
  Flag& f = Add(name, help + " (may be repeated)");
  f.kind = Flag::Kind::kRepeated;
  f.target = values;
  f.value_name = value_name;
  return *this;
}

Flags& Flags::Pair(const std::string& name, std::string* first, std::string* second,
                   const std::string& value_names, const std::string& help) {
  Flag& f = Add(name, help);
  f.kind = Flag::Kind::kPair;
  f.target = first;
  f.second = second;
  f.value_name = value_names;
  f.range = "two values, " + value_names;
  return *this;
}

Flags& Flags::ShowDefault(const std::string& name, const std::string& text) {
  Flag* f = Find(name);
  VERISUB_CHECK(f != nullptr);
  f->default_text = text;
  return *this;
}

Flags& Flags::Alias(const std::string& alias, const std::string& name) {
  Flag* f = Find(name);
  VERISUB_CHECK(f != nullptr && Find(alias) == nullptr);
  f->aliases.push_back(alias);
  return *this;
}

Flags& Flags::Positional(const std::string& name, std::string* value, const std::string& help,
                         bool required) {
  VERISUB_CHECK(positionals_.empty() || positionals_.back().values == nullptr);
  positionals_.push_back(Pos{name, help, value, nullptr, required});
  return *this;
}

Flags& Flags::Positionals(const std::string& name, std::vector<std::string>* values,
                          const std::string& help) {
  VERISUB_CHECK(positionals_.empty() || positionals_.back().values == nullptr);
  positionals_.push_back(Pos{name, help, nullptr, values, false});
  return *this;
}

Status Flags::Set(Flag& f, const std::string& text) {
  auto bad = [&] { return InvalidArgument(f.name + " needs " + f.range + ", not " + Quote(text)); };
  switch (f.kind) {
    case Flag::Kind::kBool:
      *static_cast<bool*>(f.target) = true;
      break;
    case Flag::Kind::kInt:
    case Flag::Kind::kInt64: {
      int64_t v = 0;
      if (!ParseWhole(text, &v) || v < f.min || v > f.max) return bad();
      if (f.kind == Flag::Kind::kInt)
        *static_cast<int*>(f.target) = static_cast<int>(v);
      else
        *static_cast<int64_t*>(f.target) = v;
      break;
    }
    case Flag::Kind::kUint64: {
      uint64_t v = 0;
      if (!ParseWhole(text, &v)) return bad();
      *static_cast<uint64_t*>(f.target) = v;
      break;
    }
    case Flag::Kind::kDouble: {
      double v = 0;
      if (!ParseWhole(text, &v) || !std::isfinite(v) || v < f.dmin || v > f.dmax) return bad();
      *static_cast<double*>(f.target) = v;
      break;
    }
    case Flag::Kind::kPath:
      if (text.empty()) return InvalidArgument(f.name + " needs a path, not an empty string");
      *static_cast<std::string*>(f.target) = text;
      break;
    case Flag::Kind::kString:
      *static_cast<std::string*>(f.target) = text;
      break;
    case Flag::Kind::kEnum:
      if (std::find(f.choices.begin(), f.choices.end(), text) == f.choices.end()) return bad();
      *static_cast<std::string*>(f.target) = text;
      break;
    case Flag::Kind::kRepeated:
      static_cast<std::vector<std::string>*>(f.target)->push_back(text);
      break;
    case Flag::Kind::kPair:
      VERISUB_CHECK(false);  // Parse sets both values itself
      break;
  }
  f.set = true;
  return Status::Ok();
}

Status Flags::Parse(const std::vector<std::string>& args) {
  size_t next_positional = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      help_requested_ = true;
      return Status::Ok();
    }
    if (a.size() > 1 && a[0] == '-') {
      const size_t eq = a.rfind("--", 0) == 0 ? a.find('=') : std::string::npos;
      const std::string name = a.substr(0, eq);
      Flag* f = Find(name);
      if (!f) return InvalidArgument("unknown flag " + Quote(name));
      if (f->kind == Flag::Kind::kBool) {
        if (eq != std::string::npos) return InvalidArgument(name + " takes no value");
        VERISUB_RETURN_IF_ERROR(Set(*f, ""));
        continue;
      }
      std::string value;
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return InvalidArgument(name + " needs a value" +
                               (f->range.empty() ? "" : " (" + f->range + ")"));
      }
      if (f->kind == Flag::Kind::kPair) {
        if (i + 1 >= args.size()) return InvalidArgument(name + " needs " + f->range);
        *static_cast<std::string*>(f->target) = value;
        *static_cast<std::string*>(f->second) = args[++i];
        f->set = true;
        continue;
      }
      VERISUB_RETURN_IF_ERROR(Set(*f, value));
      continue;
    }
    if (next_positional >= positionals_.size())
      return InvalidArgument("unexpected argument " + Quote(a));
    Pos& p = positionals_[next_positional];
    if (p.values) {
      p.values->push_back(a);
    } else {
      *p.value = a;
      ++next_positional;
    }
  }
  for (size_t k = next_positional; k < positionals_.size(); ++k)
    if (positionals_[k].required) return InvalidArgument("missing " + positionals_[k].name);
  return Status::Ok();
}

std::optional<int> Flags::ParseMain(int argc, char** argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  Status st = Parse(args);
  if (help_requested_) {
    std::fputs(Help().c_str(), stdout);
    return 0;
  }
  if (!st.ok()) return UsageError(st.message());
  return std::nullopt;
}

int Flags::UsageError(const std::string& message) const {
  std::fprintf(stderr, "%s: %s (see %s --help)\n", program_.c_str(), message.c_str(),
               program_.c_str());
  return 2;
}

bool Flags::IsSet(const std::string& name) const {
  const Flag* f = Find(name);
  VERISUB_CHECK(f != nullptr);
  return f->set;
}

std::string Flags::Help() const {
  std::string out = "usage: " + program_ + " " + synopsis_ + "\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Pos& p : positionals_) rows.push_back({p.name, p.help});
  for (const auto& f : flags_) {
    std::string left;
    for (const std::string& a : f->aliases) left += a + ", ";
    left += f->name;
    if (f->kind != Flag::Kind::kBool) left += " " + f->value_name;
    std::string right = f->help;
    std::string facts;
    if (f->kind != Flag::Kind::kBool && f->kind != Flag::Kind::kEnum &&
        f->kind != Flag::Kind::kPair && !f->range.empty())
      facts = f->range;
    if (!f->default_text.empty())
      facts += (facts.empty() ? "" : ", ") + std::string("default ") + f->default_text;
    if (!facts.empty()) right += " (" + facts + ")";
    rows.push_back({left, right});
  }
  rows.push_back({"-h, --help", "print this help and exit"});
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  width = std::min<size_t>(width, 30);
  const size_t indent = width + 4;
  for (const auto& [left, right] : rows) {
    std::string line = "  " + left;
    if (left.size() > width)
      line += "\n" + std::string(indent, ' ');
    else
      line += std::string(width - left.size() + 2, ' ');
    out += line + Wrap(right, indent, kHelpColumns) + "\n";
  }
  if (!epilog_.empty()) out += "\n" + epilog_ + (epilog_.back() == '\n' ? "" : "\n");
  return out;
}

}  // namespace verisub::base
