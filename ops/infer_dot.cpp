// The shape of a general dot product (Nx dot/6).
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {
namespace {

// Marks each axis of one operand as contracted or batch, checking ranges and repeats.
std::vector<bool> mark_axes(std::string_view side, const Shape& s, const std::vector<int64_t>& contract,
                            const std::vector<int64_t>& batch) {
  std::vector<bool> used(static_cast<size_t>(s.rank()), false);
  for (const auto* list : {&contract, &batch}) {
    const std::string arg = cat(list == &contract ? "contract_" : "batch_", side);
    for (int64_t a : *list) {
      if (a < 0 || a >= s.rank())
        shape_error("dot", arg, cat("axes in [0, ", s.rank(), ") of ", s.str()), str(*list));
      if (used[static_cast<size_t>(a)]) {
        shape_error("dot", arg, cat("each axis of ", side, " named once in contract and batch axes"),
                    cat("axis ", a, " repeated"));
      }
      used[static_cast<size_t>(a)] = true;
    }
  }
  return used;
}

void match_sizes(std::string_view what, const Shape& a, const std::vector<int64_t>& axes_a, const Shape& b,
                 const std::vector<int64_t>& axes_b) {
  if (axes_a.size() != axes_b.size()) {
    shape_error("dot", cat(what, "_b"), cat(axes_a.size(), " axes (as ", what, "_a)"),
                cat(axes_b.size(), " ", str(axes_b)));
  }
  for (size_t i = 0; i < axes_a.size(); ++i) {
    const int64_t da = a[static_cast<int>(axes_a[i])], db = b[static_cast<int>(axes_b[i])];
    if (da != db) {
      shape_error("dot", cat(what, "_b"),
                  cat("size ", da, " at axis ", axes_b[i], " (axis ", axes_a[i], " of a ", a.str(), ")"),
                  cat(db, " in b ", b.str()));
    }
  }
}

}  // namespace

Shape dot(const Shape& a, const std::vector<int64_t>& contract_a, const std::vector<int64_t>& batch_a,
          const Shape& b, const std::vector<int64_t>& contract_b, const std::vector<int64_t>& batch_b) {
  const std::vector<bool> used_a = mark_axes("a", a, contract_a, batch_a);
  const std::vector<bool> used_b = mark_axes("b", b, contract_b, batch_b);
  match_sizes("batch", a, batch_a, b, batch_b);
  match_sizes("contract", a, contract_a, b, contract_b);
  std::vector<int64_t> dims;
  for (int64_t ax : batch_a) dims.push_back(a[static_cast<int>(ax)]);
  for (int i = 0; i < a.rank(); ++i) {
    if (!used_a[static_cast<size_t>(i)]) dims.push_back(a[i]);
  }
  for (int i = 0; i < b.rank(); ++i) {
    if (!used_b[static_cast<size_t>(i)]) dims.push_back(b[i]);
  }
  return result_shape("dot", std::move(dims));
}

DType dot_type(DType merged) { return merged == DType::Pred ? DType::U8 : merged; }

}  // namespace sluice::infer
