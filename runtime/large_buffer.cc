// PrepareLargeWrite (see large_buffer.h).
#include "runtime/large_buffer.h"

#include "base/page_advice.h"

namespace verisub::runtime {

void PrepareLargeWrite(const void* p, size_t bytes) {
  if (bytes >= (size_t{4} << 20)) base::AdvisePages(p, bytes, base::PageAdvice::kHugePages);
  if (bytes >= (size_t{128} << 10)) base::AdvisePages(p, bytes, base::PageAdvice::kPopulateWrite);
}

}  // namespace verisub::runtime
