// What the fuzz targets share: a check that aborts (libFuzzer and the corpus driver both report
// an abort as a crash, with the input that caused it).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                               \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "fuzz check failed: %s: %s\n", #cond, std::string(what).c_str()); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
