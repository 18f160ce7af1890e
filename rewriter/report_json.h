// The optimization report as JSON (written by hand; strings escaped per RFC 8259).
#pragma once

#include <string>

#include "rewriter/optimize.h"

namespace verisub::rewriter {

std::string JsonEscape(const std::string& s);  // with the surrounding quotes

// `model` and `output` are the file names shown in the report; `phases`, when given, is where the
// whole job's time went ("phase_seconds"; the optimizer's passes are "pass_seconds").
std::string ReportToJson(const OptimizeReport& report, const std::string& model,
                         const std::string& output, const base::PhaseTimes* phases = nullptr);

// Human-readable summary: cost before and after, rules applied, graphs explored, time, stop
// reason.
std::string ReportSummary(const OptimizeReport& report);

}  // namespace verisub::rewriter
