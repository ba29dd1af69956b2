// GoogleTest side of the harness: the fixture generated tests use.
#pragma once

#include <c10/core/Device.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "backendbench/registry.h"

namespace backendbench {

class CorrectnessTest : public ::testing::TestWithParam<CaseSpec> {
 protected:
  // One case against the reference; `variant` nullptr runs the aten backend (the reference
  // standing in as the kernel, which validates the harness itself).
  void run_correctness(const OperatorSpec& op, const CaseSpec& spec, const VariantSpec* variant);

 private:
  // Every check of one draw of the case's inputs.
  void check_draw(const OperatorSpec& op, const CaseSpec& spec, const VariantSpec* variant, c10::Device device,
                  int draw, int draws);
};

// Independent input draws each kernel case runs on: BACKENDBENCH_DRAWS, else kDefaultDraws.
constexpr int kDefaultDraws = 2;
int draws_per_case();

inline auto cases_of(const OperatorSpec& op) { return ::testing::ValuesIn(op.cases, op.cases + op.case_count); }

struct CaseNamer {
  std::string operator()(const ::testing::TestParamInfo<CaseSpec>& info) const { return info.param.name; }
};

void PrintTo(const CaseSpec& spec, std::ostream* out);

}  // namespace backendbench
