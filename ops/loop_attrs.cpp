#include <sluice/ops/detail/loop_attrs.h>

#include <sluice/ops/detail/hash.h>

namespace sluice {

std::vector<Spec> LoopAttrs::result_specs() const {
  std::vector<Spec> specs(body.inputs().begin(), body.inputs().begin() + carries);
  const std::vector<Expr>& outputs = body.outputs();
  for (size_t i = static_cast<size_t>(carries); i < outputs.size(); ++i) {
    std::vector<int64_t> dims{length};
    const std::vector<int64_t>& row = outputs[i].shape().dims();
    dims.insert(dims.end(), row.begin(), row.end());
    specs.push_back({outputs[i].dtype(), Shape(std::move(dims))});
  }
  return specs;
}

bool LoopAttrs::operator==(const LoopAttrs& o) const {
  return carries == o.carries && xs == o.xs && length == o.length && reverse == o.reverse && body == o.body &&
         cond == o.cond;
}

uint64_t LoopAttrs::hash() const {
  return detail::Hasher()
      .add(body.hash())
      .add(cond.hash())
      .add(static_cast<uint64_t>(carries))
      .add(static_cast<uint64_t>(xs))
      .add(static_cast<uint64_t>(length))
      .add(reverse)
      .value();
}

}  // namespace sluice
