// The one command-line parser: a table of typed flags, checked values, help from the table.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/process_stats.h"
#include "base/status.h"

namespace verisub::base {

// A program's flags. Each flag writes into a variable the caller owns; the value the variable
// holds when the flag is declared is its default (shown by --help). Flag names are written with
// their dashes ("--budget", "-o"). Values come as `--flag VALUE` or `--flag=VALUE`; a bool
// flag takes no value. Every program gets --help (and -h).
//
//   std::string out;
//   int budget = 1000;
//   base::Flags flags("verisub-opt", "MODEL.onnx -o OUT.onnx [flags]");
//   flags.Positional("MODEL.onnx", &model, "the model to optimize");
//   flags.Path("--output", &out, "where the optimized model goes").Alias("-o", "--output");
//   flags.Int("--budget", &budget, 0, 1000000000, "graphs the search may expand");
//   if (std::optional<int> code = flags.ParseMain(argc, argv)) return *code;
class Flags {
 public:
  // `synopsis` follows "usage: PROGRAM "; `epilog` (optional) is printed after the flag table.
  Flags(std::string program, std::string synopsis, std::string epilog = "");
  ~Flags();
  Flags(const Flags&) = delete;
  Flags& operator=(const Flags&) = delete;

  Flags& Bool(const std::string& name, bool* value, const std::string& help);
  // Integers in [min, max]; anything else (junk, overflow, out of range) is an error naming
  // the flag and the range.
  Flags& Int(const std::string& name, int* value, int min, int max, const std::string& help);
  Flags& Int64(const std::string& name, int64_t* value, int64_t min, int64_t max,
               const std::string& help);
  Flags& Uint64(const std::string& name, uint64_t* value, const std::string& help);
  // Finite numbers in [min, max]; max may be infinity (no upper bound).
  Flags& Double(const std::string& name, double* value, double min, double max,
                const std::string& help);
  // A thread count in [min, MaxThreads()] (base/process_stats.h); `min` 0 usually means "one
  // per core".
  Flags& Threads(const std::string& name, int* value, int min, const std::string& help);
  Flags& String(const std::string& name, std::string* value, const std::string& value_name,
                const std::string& help);
  // A file or directory name; an empty value is an error.
  Flags& Path(const std::string& name, std::string* value, const std::string& help);
  // One of `choices`.
  Flags& Enum(const std::string& name, std::string* value, std::vector<std::string> choices,
              const std::string& help);
  // May be given many times; each value is appended.
  Flags& Repeated(const std::string& name, std::vector<std::string>* values,
                  const std::string& value_name, const std::string& help);
  // Two values after the flag (`--dump-after PASS FILE`; `--dump-after=PASS FILE` too).
  Flags& Pair(const std::string& name, std::string* first, std::string* second,
              const std::string& value_names, const std::string& help);
  // `alias` ("-o") means the same as the declared flag `name` ("--output").
  Flags& Alias(const std::string& alias, const std::string& name);

  // Replaces the default --help shows for `name` (e.g. "every core" for a 0 that means so).
  Flags& ShowDefault(const std::string& name, const std::string& text);

  // Arguments that are not flags, in order. A required positional missing is an error; a
  // positional list takes every remaining one. An argument starting with '-' is never
  // positional (except "-" itself).
  Flags& Positional(const std::string& name, std::string* value, const std::string& help,
                    bool required = true);
  Flags& Positionals(const std::string& name, std::vector<std::string>* values,
                     const std::string& help);

  // Parses `args` (without the program name). Errors are InvalidArgument with one line that
  // names the flag and what it expects. --help sets help_requested() and stops parsing.
  Status Parse(const std::vector<std::string>& args);
  // For main(): parses argv; on --help prints Help() to stdout and returns 0; on an error
  // prints "PROGRAM: message" and a hint to stderr and returns 2; otherwise returns nothing.
  std::optional<int> ParseMain(int argc, char** argv);

  // For checks across flags after ParseMain: prints "PROGRAM: message" and the hint as
  // ParseMain does, returns 2.
  int UsageError(const std::string& message) const;

  bool help_requested() const { return help_requested_; }
  // Whether `name` (or one of its aliases) was given on the command line.
  bool IsSet(const std::string& name) const;
  // Usage, one entry per flag with its type, range and default, then the epilog.
  std::string Help() const;
  const std::string& program() const { return program_; }

 private:
  struct Flag;
  struct Pos;
  Flag& Add(const std::string& name, const std::string& help);
  // The part Int and Int64 share; the caller sets the kind.
  Flag& AddInteger(const std::string& name, void* target, int64_t min, int64_t max, int64_t value,
                   const std::string& help);
  Flag* Find(const std::string& name);
  const Flag* Find(const std::string& name) const;
  Status Set(Flag& f, const std::string& text);

  std::string program_, synopsis_, epilog_;
  std::vector<std::unique_ptr<Flag>> flags_;
  std::vector<Pos> positionals_;
  bool help_requested_ = false;
};

}  // namespace verisub::base
