// Kernels and axioms agree: every axiom, under every assignment of its parameter variables, holds
// on random small shapes through the reference kernels, exactly in the modular integers and
// within tolerance in double; and a wrong axiom is caught.
#include "specs/axiom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "specs/axiom_eval.h"
#include "specs/registry.h"
#include "tests/specs/test_util.h"

namespace verisub::specs {
namespace {

using testing::RandomTensor;

struct CheckResult {
  int assignments = 0;
  int cases = 0;  // shape cases evaluated
  int assignments_without_shapes = 0;
  std::string first_failure;  // empty when the axiom held everywhere
};

template <class S, class Eq>
bool CheckCase(const S& s, const Axiom& ax, const std::vector<int64_t>& assignment,
               const AxiomShapeCase& c, std::mt19937_64& rng, Eq&& eq, std::string* why) {
  std::vector<Tensor<typename S::Elem>> vars;
  for (const TensorType& t : c.var_types) vars.push_back(RandomTensor(s, t, rng));
  auto l = EvalAxiomTerm(s, ax.lhs, assignment, vars);
  auto r = EvalAxiomTerm(s, ax.rhs, assignment, vars);
  if (!l.ok() || !r.ok()) {
    *why = "evaluation failed: " + (l.ok() ? r.status() : l.status()).message();
    return false;
  }
  if (!(l->type == r->type)) {
    *why = "types differ: " + l->type.ToString() + " vs " + r->type.ToString();
    return false;
  }
  for (size_t i = 0; i < l->data.size(); ++i)
    if (!eq(l->data[i], r->data[i])) {
      *why = "element " + std::to_string(i) + " differs";
      return false;
    }
  return true;
}

bool RealOnly(const Axiom& ax) {
  const OpSpec* op = FindOp(ax.owner);
  return op != nullptr &&
         std::count(op->real_only_axioms.begin(), op->real_only_axioms.end(), ax.name) > 0;
}

// `modular` false checks the double semantics only (the axioms OpSpec::real_only_axioms names).
CheckResult CheckAxiom(const Axiom& ax, int cases_per_assignment, uint64_t seed,
                       bool modular = true) {
  CheckResult res;
  std::mt19937_64 rng(seed);
  ModIntSemantics mi;
  DoubleSemantics db;
  // NaN on both sides (a negative variance in batchnorm) is agreement.
  auto close = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-9 * (1 + std::fabs(a));
  };
  auto exact = [](uint32_t a, uint32_t b) { return a == b; };
  for (const auto& assignment : ax.ParamAssignments()) {
    ++res.assignments;
    int found = 0;
    for (int k = 0; k < cases_per_assignment; ++k) {
      AxiomShapeCase c;
      if (!FindAxiomShapes(ax, assignment, 4, 20000, rng, &c)) break;
      ++found;
      ++res.cases;
      std::string why;
      bool ok = (!modular || CheckCase(mi, ax, assignment, c, rng, exact, &why)) &&
                CheckCase(db, ax, assignment, c, rng, close, &why);
      if (!ok && res.first_failure.empty()) {
        std::string shapes;
        for (size_t i = 0; i < c.var_types.size(); ++i)
          shapes += " " + ax.vars[i].name + "=" + c.var_types[i].shape.ToString();
        res.first_failure = FormatAxiomTerm(ax, ax.lhs, &assignment) + " = " +
                            FormatAxiomTerm(ax, ax.rhs, &assignment) + " with" + shapes + ": " +
                            why;
      }
    }
    if (found == 0) ++res.assignments_without_shapes;
  }
  return res;
}

TEST(AxiomTest, AllAxiomsParse) {
  auto axioms = AllAxioms();
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  EXPECT_GE(axioms->size(), 44u);
}

TEST(AxiomTest, EveryAxiomHoldsOnTheReferenceKernels) {
  auto axioms = AllAxioms();
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  for (const Axiom& ax : *axioms) {
    CheckResult r = CheckAxiom(ax, 8, 42, !RealOnly(ax));
    EXPECT_TRUE(r.first_failure.empty()) << ax.owner << ":" << ax.name << ": " << r.first_failure;
    EXPECT_GT(r.cases, 0) << ax.name << ": no shapes found";
    EXPECT_EQ(r.assignments_without_shapes, 0)
        << ax.name << ": " << r.assignments_without_shapes << " of " << r.assignments
        << " parameter assignments had no valid shapes";
  }
}

// The axioms exempt from the modular check name real axioms of their operator, and each of them
// does fail there (else it needs no exemption).
TEST(AxiomTest, RealOnlyAxiomsExistAndFailInTheModularIntegers) {
  auto axioms = AllAxioms();
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  int exempt = 0;
  for (const OpSpec& op : AllOps())
    for (const std::string& name : op.real_only_axioms) {
      ++exempt;
      auto it = std::find_if(axioms->begin(), axioms->end(),
                             [&](const Axiom& a) { return a.owner == op.name && a.name == name; });
      ASSERT_NE(it, axioms->end()) << op.name << " has no axiom " << name;
      EXPECT_TRUE(CheckAxiom(*it, 8, 42, false).first_failure.empty()) << name;
      EXPECT_FALSE(CheckAxiom(*it, 8, 42, true).first_failure.empty())
          << name << " holds in the modular integers: drop it from real_only_axioms";
    }
  EXPECT_GE(exempt, 4);
}

TEST(AxiomTest, WrongAxiomsAreCaught) {
  // Each is plausible but false: linearity with a relu, relu over a sum, concat associativity
  // (which would change later splits), a matmul that commutes, and the grouped-convolution trap.
  const std::string wrong = R"(
conv_linear_with_relu (x:4 y:4 w:4) (conv2d[activation=relu] (ewadd x y) w) = (ewadd (conv2d[activation=relu] x w) (conv2d[activation=relu] y w))
relu_distributes (x y) (relu (ewadd x y)) = (ewadd (relu x) (relu y))
concat_assoc (x y z) (concat (concat x y) z) = (concat x (concat y z))
matmul_comm (x:2 y:2) (matmul[activation=none] x y) = (matmul[activation=none] y x)
conv_concat_any_group (x:4 w:4 v:4) (concat[axis=1] (conv2d x w) (conv2d x v)) = (conv2d x (concat[axis=0] w v))
)";
  auto axioms = ParseAxioms("fixture", wrong);
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  ASSERT_EQ(axioms->size(), 5u);
  for (const Axiom& ax : *axioms) {
    CheckResult r = CheckAxiom(ax, 8, 7);
    EXPECT_FALSE(r.first_failure.empty()) << ax.name << " was not caught";
  }
}

TEST(AxiomTest, MalformedAxiomsGiveErrors) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"a (x) (relu y) = x", "undeclared tensor variable 'y'"},
      {"a (x) (frobnicate x) = x", "unknown operator 'frobnicate'"},
      {"a (x) (relu x x) = x", "'relu' takes 1 inputs, got 2"},
      {"a (x:2) (matmul[act=relu] x x) = x", "'matmul' has no parameter 'act'"},
      {"a (x) (concat[axis=?a] x x) = (split.2[axis=?a] x)", "'split' has no output 2"},
      {"a (x y) (relu x) = x", "tensor variable 'y' is never used"},
      {"a (x) (relu x) x", "expected '='"},
      {"a (x) (relu x", "missing ')'"},
      {"a (x) (matmul[activation=fast] x x) = x", "unknown value 'fast'"},
  };
  for (const Case& c : cases) {
    auto r = ParseAxioms("fixture", c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.text << " -> " << r.status().message();
    EXPECT_NE(r.status().message().find("axioms of 'fixture', line 1"), std::string::npos);
  }
}

}  // namespace
}  // namespace verisub::specs
