#pragma once
// One function per shape op, each building the box copies (shape_box.h) that
// make its result; run_shape (shape.cpp) dispatches to them. Arguments as
// run_shape's: in[i] is operand i, out is the result, laid out as the node's
// specs say.

#include <span>

#include <sluice/ops/expr.h>

namespace sluice::cpu {

void run_reshape(const Node& node, std::span<const void* const> in, void* out);
void run_broadcast(const Node& node, std::span<const void* const> in, void* out);
void run_transpose(const Node& node, std::span<const void* const> in, void* out);
void run_reverse(const Node& node, std::span<const void* const> in, void* out);
void run_pad(const Node& node, std::span<const void* const> in, void* out);
void run_slice(const Node& node, std::span<const void* const> in, void* out);
void run_put_slice(const Node& node, std::span<const void* const> in, void* out);
void run_concatenate(const Node& node, std::span<const void* const> in, void* out);

}  // namespace sluice::cpu
