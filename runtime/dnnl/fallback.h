// Nodes oneDNN cannot take run on the reference kernels, with reorders to and from plain.
#pragma once

#include "runtime/dnnl/builder.h"

namespace verisub::runtime::dnnl_backend {

// Emits a host step running the builder's node with runtime::RunNode.
void EmitReference(KernelBuilder& b);

}  // namespace verisub::runtime::dnnl_backend
