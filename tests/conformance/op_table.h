#pragma once
// The op table: for each op name of ops/op_list.def (and the builders that
// have no node of their own, squeeze and stack), how a case calls the builder
// of ops/ops.h with its attrs and its inputs as Exprs. The unary and binary
// entries are generated from the catalogue; an op of the catalogue missing
// here fails ConformanceCatalogue.EveryOpHasABuilder.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <sluice/ops/ops.h>
#include "tests/conformance/cases.h"

namespace sluice::conformance {

using Builder = std::function<Expr(const CaseAttrs& attrs, const std::vector<Expr>& inputs)>;

const std::map<std::string, Builder, std::less<>>& op_table();

}  // namespace sluice::conformance
