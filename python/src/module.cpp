// sluice._sluice: the compiled half of the sluice package. Python describes
// computations and drives them; tracing, compiling and running stay in C++.

#include "bindings.h"

NB_MODULE(_sluice, m) {
  using namespace sluice::python;
  m.doc() = "sluice's C++ core: tensors, traced expressions, compiled functions and streams";
  bind_errors(m);
  bind_specs(m);
  bind_tensor(m);
  bind_expr(m);
  bind_ops(m);
  bind_jit(m);
  bind_loops(m);
  bind_nn(m);
  bind_stream(m);
  bind_tags(m);
  bind_pipeline(m);
}
