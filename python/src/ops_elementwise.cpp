// The unary and binary ops of ops/op_list.def, one Python function each,
// generated from the catalogue as ops.h's builders are: a binary op takes
// an Expr, a number or an array on either side.

#include <sluice/ops/ops.h>

#include "bindings.h"

namespace sluice::python {

void bind_elementwise_ops(nb::module_& m) {
#define SLUICE_UNARY_OP(e, fn, rule, props, grad) \
  m.def(                                          \
      #fn, [](nb::handle x) { return fn(expr_of(x, #fn)); }, nb::arg("x"));
#define SLUICE_BINARY_OP(e, fn, rule, props, grad)                                                        \
  m.def(                                                                                                  \
      #fn, [](nb::handle a, nb::handle b) { return fn(expr_of(a, #fn), expr_of(b, #fn)); }, nb::arg("a"), \
      nb::arg("b"));
#include <sluice/ops/op_list.def>
}

}  // namespace sluice::python
