// Small statistics the timing and the scores share (no libtorch).
#pragma once

namespace backendbench {

// Student's t at 97.5 % for `degrees` degrees of freedom (1.96 beyond 30): the half-width of a
// 95 % interval in standard errors.
double t_quantile_975(int degrees);

}  // namespace backendbench
