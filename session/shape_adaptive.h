// A model run at any input shape its inputs accept, as ONNX Runtime runs a dynamic-axes export
// (a batch, a sequence length, a decoder's growing past), behind the Python module and the
// embedding API. Symbolic dimensions that SessionOptions::input_shapes does not fix are handled
// by `mode`:
// - "dynamic": one Session prepared with them symbolic (SessionOptions::dynamic_shapes), at
//   Create: prepared once, every shape runs on it (values of run-time shape on slower kernels).
// - "static": a Session prepared per shape at the first run at that shape (the fastest kernels;
//   seconds of preparation per new shape), the last kShapesKept kept.
// - "auto" (the default): the dynamic Session, and a static one for a shape once that shape has
//   run kStaticAfter times, at most kShapesKept such preparations in the object's life, so that
//   shapes that never repeat (a decoder's past) never wait for one and shapes that cycle cannot
//   make it prepare forever. A model the dynamic Session cannot prepare runs as "static".
// A model without open dimensions is one Session, prepared at Create.
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/onnx_import.h"
#include "session/session.h"

namespace verisub {

class ShapeAdaptiveSession {
 public:
  static constexpr size_t kShapesKept = 8;
  static constexpr int kStaticAfter = 3;

  // Imports the model with the options given (from a file or from bytes).
  using Importer = std::function<StatusOr<runtime::Graph>(const runtime::ImportOptions&)>;

  // `declared`: the model's inputs and outputs as it declares them (ReadDeclaredInterface).
  static StatusOr<std::unique_ptr<ShapeAdaptiveSession>> Create(Importer import,
                                                                runtime::DeclaredInterface declared,
                                                                const SessionOptions& options,
                                                                const std::string& mode = "auto");

  // Runs one tensor per declared input, in their order, on the Session for their shapes.
  StatusOr<std::vector<runtime::HostTensor>> Run(const std::vector<runtime::HostTensor>& inputs);

  // Whether some input dimension is open (the modes apply).
  bool open_dimensions() const { return open_; }
  const runtime::DeclaredInterface& declared() const { return declared_; }
  // The Session the last Run used; before any, the only or the dynamic one (null in "static"
  // mode with open dimensions).
  std::shared_ptr<Session> current() const;
  // Static Sessions prepared so far (per shape), runs on the dynamic one, whether there is one,
  // and why not where "auto" could not prepare it.
  int shapes_prepared() const;
  int dynamic_runs() const;
  bool has_dynamic() const { return dynamic_ != nullptr; }
  bool last_run_dynamic() const;
  const std::string& dynamic_error() const { return dynamic_error_; }

 private:
  ShapeAdaptiveSession() = default;
  // The Session to run inputs of `shapes` on: a static one prepared for them, or the dynamic
  // one, as the class comment says. Counts the run.
  StatusOr<std::shared_ptr<Session>> ForShapes(const runtime::InputShapes& shapes);
  // The static Session for `shapes`, cached or prepared now.
  StatusOr<std::shared_ptr<Session>> Prepared(const runtime::InputShapes& shapes);

  Importer import_;
  runtime::DeclaredInterface declared_;
  SessionOptions options_;
  std::string mode_;
  bool open_ = false;
  std::shared_ptr<Session> dynamic_;
  std::string dynamic_error_;
  std::string layout_choice_;  // "dp" or "backend", timed at the first static preparation
  std::mutex prepare_mutex_;   // one preparation at a time
  mutable std::mutex mutex_;   // guards what follows
  std::shared_ptr<Session> current_;
  std::list<std::pair<std::string, std::shared_ptr<Session>>> cache_;  // most recent first
  std::map<std::string, int> seen_;  // runs on the dynamic Session per shape ("auto")
  size_t promoted_ = 0;              // static Sessions prepared for shapes seen often ("auto")
  int shapes_prepared_ = 0;
  int dynamic_runs_ = 0;
};

}  // namespace verisub
