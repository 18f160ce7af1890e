// ONNX control flow (If, Loop, Scan) in the graph and the reference executor. A node with
// subgraphs reads values of the enclosing graph by name from inside them ("captured" values);
// the import makes each such value an input of the node after its declared ones, in the order
// CapturedNames gives, so that the graph's dependencies, dead-value removal and buffer lifetimes
// see the reads, and the kernels receive the captured tensors as inputs. The node's proto keeps
// its declared inputs; the export writes those and renames the subgraphs' reads to the names it
// gives the captured values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/host_tensor.h"

namespace onnx {
class NodeProto;
class GraphProto;
}  // namespace onnx

namespace verisub::runtime {

class KernelContext;

// Whether the node has a graph attribute.
bool HasSubgraph(const onnx::NodeProto& np);

// The names the node's subgraphs (nested ones included) read without defining them, in the
// order of their first read, each once.
std::vector<std::string> CapturedNames(const onnx::NodeProto& np);

// Renames the captured reads of the node's subgraphs (`renames`: old name -> new name).
void RenameCaptured(onnx::NodeProto* np, const std::map<std::string, std::string>& renames);

// The captured values a control-flow kernel was given: CapturedNames(ctx.node()) bound to the
// inputs after the node's declared ones.
StatusOr<std::map<std::string, const HostTensor*>> CapturedInputs(const KernelContext& ctx);

}  // namespace verisub::runtime
