// The reference executor behind the Backend interface: every node it has a kernel for, in
// double precision, with the results of runtime::Execute.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace verisub::runtime {

std::unique_ptr<Backend> MakeReferenceBackend();

}  // namespace verisub::runtime
