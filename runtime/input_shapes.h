// Graph input shapes given by the user (--input-shape NAME=1,3,224,224, as onnx-simplifier's
// --overwrite-input-shape): parsing, checking against the model, and the error that asks for
// them when a model has symbolic dimensions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace onnx {
class GraphProto;
}

namespace verisub::runtime {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

// Parses "NAME=D0,D1,..." (positive sizes) into `shapes`; a name given twice is an error.
Status ParseInputShapeFlag(const std::string& arg, InputShapes* shapes);

// Sets the shapes of the named graph inputs. Errors: a name that is no graph input (the inputs
// are listed), a size below 1, a rank or a fixed dimension the model contradicts.
Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto* g);

// Every graph input must have a static shape: the error names the input and its symbolic
// dimension and shows the --input-shape that would fix it.
Status CheckInputShapesStatic(const onnx::GraphProto& g);

}  // namespace verisub::runtime
