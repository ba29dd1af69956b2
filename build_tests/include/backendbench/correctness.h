// GoogleTest side of the harness: the fixture generated tests use.
#pragma once

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
};

inline auto cases_of(const OperatorSpec& op) { return ::testing::ValuesIn(op.cases, op.cases + op.case_count); }

struct CaseNamer {
  std::string operator()(const ::testing::TestParamInfo<CaseSpec>& info) const { return info.param.name; }
};

void PrintTo(const CaseSpec& spec, std::ostream* out);

}  // namespace backendbench
