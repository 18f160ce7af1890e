// Float16 models computed in float32: what a CPU engine does with a model exported in half
// precision (the weights and activations of a GPU-minded export), since the CPU kernels are
// float32 ones. ONNX Runtime's CPU engine likewise computes most float16 operators in float32
// (casts inserted around them); here the intermediate values keep float32's precision.
#pragma once

#include "runtime/graph.h"

namespace verisub::runtime {

// Every float16 value of `g` becomes float32 (constants converted exactly), a float16 graph
// input is cast to float32 where it enters and a float16 graph output is cast back from float32
// where it leaves, so the graph's interface is unchanged; a Cast to float16 inside becomes a
// Cast to float32, a ConstantOfShape of a float16 value one of float32. Nothing changes when an
// operator would still make a float16 value some other way (a dtype attribute): returns false
// then, else whether anything was float16.
bool ComputeFloat16InFloat32(Graph* g);

}  // namespace verisub::runtime
