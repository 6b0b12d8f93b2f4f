#include <sluice/devices/cuda/kernel_source.h>
#include <sluice/devices/cuda/kernel_writing.h>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include <sluice/devices/detail/broadcast_map.h>
#include <sluice/devices/cuda/kernel_params.h>
#include <sluice/devices/cuda/launch_geometry.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cuda {

bool is_narrow(DType t) { return t == DType::F16 || t == DType::BF16; }

// Storage to compute type, and back.
std::string load(DType t, const std::string& e) {
  if (t == DType::F16) return "sl::f16_to_f32(" + e + ")";
  if (t == DType::BF16) return "sl::bf16_to_f32(" + e + ")";
  return e;
}
std::string store(DType t, const std::string& e) {
  if (t == DType::F16) return "sl::f32_to_f16(" + e + ")";
  if (t == DType::BF16) return "sl::f32_to_bf16(" + e + ")";
  return e;
}
// A result of an op that is not exact, rounded to f16/bf16 precision.
std::string rounded(DType t, const std::string& e) {
  if (t == DType::F16) return "sl::round_f16(" + e + ")";
  if (t == DType::BF16) return "sl::round_bf16(" + e + ")";
  return e;
}

// The head of a kernel taking `words` parameter words.
std::string head(const std::string& name, int words, int resident_blocks) {
  const std::string bounds = resident_blocks > 0 ? fmt::format("{}, {}", kBlockThreads, resident_blocks)
                                                 : fmt::format("{}", kBlockThreads);
  return fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}(const sl::Words<{}> a) {{\n",
                     bounds, name, std::max(words, 1));
}
namespace {

const char* const kGridLoop =
    "  for (sl::i64 i = (sl::i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (sl::i64)gridDim.x * blockDim.x) "
    "{\n";
// A region's loop: four elements per round with no bound check between
// them, so that each thread has four loads in flight (its inputs are
// read-only: the compiler issues the next elements' loads before this one's
// stores). With a check per element (#pragma unroll) every load waited for
// its branch, one load in flight, and a fused chain ran at 0.79 of a copy.
std::string region_loop(const std::string& body) {
  return "  const sl::i64 stride = (sl::i64)gridDim.x * blockDim.x;\n"
         "  sl::i64 at = (sl::i64)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  auto element = [&](const sl::i64 i) {\n" +
         body +
         "  };\n"
         "  for (; at + 3 * stride < n; at += 4 * stride) {\n"
         "    element(at);\n"
         "    element(at + stride);\n"
         "    element(at + 2 * stride);\n"
         "    element(at + 3 * stride);\n"
         "  }\n"
         "  for (; at < n; at += stride) element(at);\n";
}

std::string pointer(const std::string& type, int word, bool writable) {
  return fmt::format("(({}{}*)a.w[{}])", writable ? "" : "const ", type, word);
}

// ---------------------------------------------------------------- elementwise expressions

// The expression of elementwise node n over its operands' compute values.
std::string op_expression(const Node& n, const std::vector<std::string>& args) {
  const DType to = n.spec.dtype;
  const DType from = n.operands[0]->spec.dtype;
  if (n.op == Op::AsType) {
    if (to == DType::Pred) return "sl::to_pred(" + args[0] + ")";
    if (is_narrow(to)) return rounded(to, "sl::narrow_from(" + args[0] + ")");
    return fmt::format("sl::as_type<{}>({})", compute_type(to), args[0]);
  }
  if (n.op == Op::Bitcast) {
    const std::string bits = store(from, args[0]);  // f16/bf16: their bits
    const std::string cast = fmt::format("sl::bitcast<{}>({})", storage_type(to), bits);
    if (to == DType::Pred) return "sl::to_pred(" + cast + ")";
    return load(to, cast);
  }
  if (n.op == Op::BitwiseNot && from == DType::Pred) return "sl::bitwise_not_pred(" + args[0] + ")";
  std::string call = fmt::format("sl::{}(", op_name(n.op));
  for (size_t k = 0; k < args.size(); ++k) call += (k ? ", " : "") + args[k];
  call += ")";
  return op_has(n.op, kExact) ? call : rounded(to, call);
}

// The storage value of one element's bytes, as an expression of its bits.
std::string literal(DType t, const std::vector<uint8_t>& bytes) {
  auto bits = [&](size_t at, size_t size) {
    uint64_t v = 0;
    for (size_t k = size; k-- > 0;) v = v << 8 | bytes[at + k];
    return v;
  };
  switch (dtype_size(t)) {
    case 1: return fmt::format("sl::bitcast<{}>((sl::u8){:#x})", storage_type(t), bits(0, 1));
    case 2: return fmt::format("sl::bitcast<{}>((sl::u16){:#x})", storage_type(t), bits(0, 2));
    case 4: return fmt::format("sl::bitcast<{}>((sl::u32){:#x}u)", storage_type(t), bits(0, 4));
    case 8: return fmt::format("sl::bitcast<{}>((sl::u64){:#x}ull)", storage_type(t), bits(0, 8));
    case 16:
      return fmt::format("sl::mk(sl::double_of({:#x}ull), sl::double_of({:#x}ull))", bits(0, 8), bits(8, 8));
  }
  throw InternalError(error_message("cuda: fused region", "constant", "an element of 1 to 16 bytes", dtype_size(t)));
}

class RegionWriter {
 public:
  explicit RegionWriter(const LoweredUnit& step) : step_(step), shape_(step.nodes.front()->spec.shape) {
    for (size_t k = 0; k < step.reads.size(); ++k) input_.emplace(step.reads[k], static_cast<int>(k));
    words_.push_back(static_cast<uint64_t>(shape_.size()));
  }

  KernelSource write() {
    std::string body;
    for (const Node* n : step_.nodes) {
      if (n->spec.shape.size() != shape_.size())
        throw InternalError(error_message("cuda: fused region", std::string(op_name(n->op)),
                                          fmt::format("the region's shape {}", shape_), n->spec));
      if (n->op == Op::Broadcast) {
        value_[n] = broadcast_load(*n, body);
        continue;
      }
      if (!is_elementwise(n->op))
        throw InternalError(error_message("cuda: fused region", "node", "an elementwise op or a broadcast load",
                                          std::string(op_name(n->op))));
      std::vector<std::string> args;
      for (size_t k = 0; k < n->operands.size(); ++k) args.push_back(value_of(*n->operands[k], body));
      const std::string v = fmt::format("v{}", next_++);
      body += fmt::format("    const {} {} = {};\n", compute_type(n->spec.dtype), v, op_expression(*n, args));
      value_[n] = v;
    }
    const int reads = static_cast<int>(step_.reads.size());
    for (size_t j = 0; j < step_.writes.size(); ++j) {
      const Node* w = step_.writes[j];
      body += fmt::format("    {}[i] = {};\n", pointer(storage_type(w->spec.dtype), reads + static_cast<int>(j), true),
                          store(w->spec.dtype, value_of(*w, body)));
    }
    const int words = pointers() + static_cast<int>(words_.size());
    std::string code = prelude_source() + head("region", words) + "  const sl::i64* p = (const sl::i64*)a.w;\n" +
                       fmt::format("  const sl::i64 n = p[{}];\n", pointers()) + before_ + region_loop(body) + "}\n";
    return {std::move(code), {"region"}, std::move(words_)};
  }

 private:
  // The compute value of `operand` at element i: computed earlier in the
  // region, or an input of the region's size loaded once.
  std::string value_of(const Node& operand, std::string& body) {
    if (auto it = value_.find(&operand); it != value_.end()) return it->second;
    auto in = input_.find(&operand);
    if (in == input_.end())
      throw InternalError(error_message("cuda: fused region", std::string(op_name(operand.op)),
                                        "a region input or an earlier node of the region", "neither"));
    const std::string v = fmt::format("x{}", in->second);
    body += fmt::format("    const {} {} = {};\n", compute_type(operand.spec.dtype), v,
                        load(operand.spec.dtype, fmt::format("sl::ld({} + i)", pointer(storage_type(operand.spec.dtype),
                                                                                      in->second, false))));
    value_[&operand] = v;
    return v;
  }

  int pointers() const { return static_cast<int>(step_.reads.size() + step_.writes.size()); }

  // A broadcast of a region input: its element for output element i, by
  // the broadcast map (one element for a scalar), whose dims and strides are
  // parameter words.
  std::string broadcast_load(const Node& b, std::string& body) {
    const Node& x = *b.operands[0];
    auto in = input_.find(&x);
    if (in == input_.end())
      throw InternalError(error_message("cuda: fused region", "broadcast", "a broadcast of a region input",
                                        std::string(op_name(x.op))));
    const BroadcastMap map = make_broadcast_map(x.spec.shape, shape_, b.attrs.axes);
    if (map.identity()) return value_of(x, body);
    const std::string v = fmt::format("b{}", next_++);
    const std::string type = compute_type(x.spec.dtype);
    if (x.spec.size() == 1) {
      // A scalar: loaded once per thread, before the loop; a constant's
      // value is written into the kernel.
      const std::string value = x.op == Op::Constant && x.attrs.literal
                                    ? literal(x.spec.dtype, x.attrs.literal->bytes)
                                    : fmt::format("sl::ld({})", pointer(storage_type(x.spec.dtype), in->second, false));
      before_ += fmt::format("  const {} {} = {};\n", type, v, load(x.spec.dtype, value));
      return v;
    }
    const int at = pointers() + static_cast<int>(words_.size());
    const auto rank = static_cast<int>(map.dims.size());
    for (int64_t d : map.dims) words_.push_back(static_cast<uint64_t>(d));
    for (int64_t s : map.strides) words_.push_back(static_cast<uint64_t>(s));
    const std::string index = fmt::format("sl::offset_of(i, {}, p + {}, p + {})", rank, at, at + rank);
    body += fmt::format("    const {} {} = {};\n", type, v,
                        load(x.spec.dtype, fmt::format("sl::ld({} + {})", pointer(storage_type(x.spec.dtype), in->second,
                                                                              false),
                                                         index)));
    return v;
  }

  const LoweredUnit& step_;
  const Shape& shape_;
  std::unordered_map<const Node*, int> input_;
  std::unordered_map<const Node*, std::string> value_;
  std::vector<uint64_t> words_;  // after the pointers: n, then each broadcast map's dims and strides
  std::string before_;            // what each thread computes once, before its loop
  int next_ = 0;
};

// ---------------------------------------------------------------- reductions

}  // namespace

static std::string int_limit(DType t, bool lowest) {
  return fmt::format("sl::traits<{}>::{}()", compute_type(t), lowest ? "min" : "max");
}

Reduction reduction(Op op, DType in, DType out, TieBreak tie_break) {
  const std::string ct = compute_type(in);
  const bool integral = is_integer(in) || in == DType::Pred;
  const bool complex = is_complex(in);
  switch (op) {
    case Op::Sum:
    case Op::Product: {
      const bool sum = op == Op::Sum;
      // Integers sum (and multiply) in 64 bits, wrapping: sign-extended first.
      const std::string acc = integral ? "sl::u64" : ct;
      const std::string lift =
          integral ? (dtype_kind(in) == DTypeKind::Signed ? "(sl::u64)(sl::i64)x" : "(sl::u64)x") : "x";
      const std::string one = complex ? fmt::format("sl::mk(({0})1, ({0})0)", compute_type(to_real(in))) : "1";
      const std::string zero = complex ? fmt::format("sl::mk(({0})0, ({0})0)", compute_type(to_real(in))) : "0";
      const std::string combine = complex ? (sum ? "sl::add(p, q)" : "sl::multiply(p, q)") : (sum ? "p + q" : "p * q");
      return {acc, sum ? zero : one, lift, combine, store(out, fmt::format("({})p", compute_type(out)))};
    }
    case Op::ReduceMax:
    case Op::ReduceMin: {
      const bool max = op == Op::ReduceMax;
      std::string identity;
      if (in == DType::Pred) identity = max ? "0" : "1";
      else if (integral) identity = int_limit(in, max);
      else identity = fmt::format("{}sl::flt<{}>::inf()", max ? "-" : "", ct);
      return {ct, identity, "x", max ? "sl::max(p, q)" : "sl::min(p, q)", store(out, "p")};
    }
    case Op::All:
      return {"sl::u8", "1", "sl::to_pred(x)", "(sl::u8)(p & q)", "p"};
    case Op::Any:
      return {"sl::u8", "0", "sl::to_pred(x)", "(sl::u8)(p | q)", "p"};
    case Op::Argmax:
    case Op::Argmin: {
      // (value, index) pairs; index -1: none yet. NaN is the extreme of
      // both; ties and NaNs go to the lower index (TieBreak::Low) or the
      // higher (High).
      const bool max = op == Op::Argmax;
      const bool high = tie_break == TieBreak::High;
      const std::string pick = high ? "p.i > q.i" : "p.i < q.i";
      const std::string combine = fmt::format(
          "p.i < 0 ? q : q.i < 0 ? p : (sl::is_nan(p.v) && sl::is_nan(q.v)) ? (({0}) ? p : q) : sl::is_nan(p.v) ? p "
          ": sl::is_nan(q.v) ? q : p.v == q.v ? (({0}) ? p : q) : (p.v {1} q.v ? p : q)",
          pick, max ? ">" : "<");
      return {"Pair", "Pair{(" + ct + ")0, -1}", "Pair{x, r}", combine,
              fmt::format("sl::as_type<{}>(p.i < 0 ? (sl::i64)0 : p.i)", compute_type(out))};
    }
    default: break;
  }
  throw InternalError(error_message("cuda: reduce", "op", "a reduction", std::string(op_name(op))));
}

std::string storage_type(DType t) {
  switch (t) {
    case DType::Pred: return "sl::u8";
    case DType::S8: return "sl::i8";
    case DType::S16: return "sl::i16";
    case DType::S32: return "sl::i32";
    case DType::S64: return "sl::i64";
    case DType::U8: return "sl::u8";
    case DType::U16: return "sl::u16";
    case DType::U32: return "sl::u32";
    case DType::U64: return "sl::u64";
    case DType::F16:
    case DType::BF16: return "sl::u16";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::C64: return "sl::c64";
    case DType::C128: return "sl::c128";
  }
  return "void";
}

std::string compute_type(DType t) { return is_narrow(t) ? "float" : storage_type(t); }

KernelSource region_kernel(const LoweredUnit& step) {
  if (!step.region || step.nodes.empty())
    throw InternalError(error_message("cuda: region_kernel", "", "a fused region step", step.what));
  return RegionWriter(step).write();
}

KernelSource box_copy_kernel(int elem_bytes) {
  std::string e;
  switch (elem_bytes) {
    case 1: e = "sl::u8"; break;
    case 2: e = "sl::u16"; break;
    case 4: e = "sl::u32"; break;
    case 8: e = "sl::u64"; break;
    case 16: e = "sl::b16"; break;
    default: throw InternalError(error_message("cuda: box copy", "element size", "1, 2, 4, 8 or 16 bytes", elem_bytes));
  }
  namespace w = box_words;
  std::string code = prelude_source() + head("box_copy", w::kWords);
  code += fmt::format(
      "  const sl::i64* p = (const sl::i64*)a.w;\n"
      "  const {0}* src = (const {0}*)a.w[{1}];\n"
      "  {0}* dst = ({0}*)a.w[{2}];\n"
      "  const sl::i64 n = p[{3}];\n"
      "  const int rank = (int)p[{4}];\n"
      "  sl::i64 from = p[{5}], to = p[{6}];\n"
      "  const int dynamic = (int)p[{7}];\n"
      "  if (dynamic > 0) {{\n"
      "    sl::i64 moved = 0;\n"
      "    for (int j = 0; j < dynamic; ++j) {{\n"
      "      sl::i64 s = *(const sl::i64*)a.w[{8} + j];\n"
      "      s = s < 0 ? 0 : s > p[{9} + j] ? p[{9} + j] : s;\n"
      "      moved += s * p[{10} + j];\n"
      "    }}\n"
      "    if (p[{11}]) from += moved; else to += moved;\n"
      "  }}\n"
      "  if (rank == 1) {{\n"
      "    const sl::i64 os = p[{12}], is = p[{13}];\n"
      "  {14}"
      "      dst[to + i * os] = src[from + i * is];\n"
      "    }}\n"
      "    return;\n"
      "  }}\n"
      "{14}"
      "    dst[to + sl::offset_of(i, rank, p + {15}, p + {12})] = src[from + sl::offset_of(i, rank, p + {15}, p + {13})];\n"
      "  }}\n"
      "}}\n",
      e, w::kSource, w::kResult, w::kCount, w::kRank, w::kSourceOffset, w::kResultOffset, w::kDynamicRank, w::kStarts,
      w::kMaxStart, w::kDynamicStride, w::kDynamicOnSource, w::kResultStrides, w::kSourceStrides, kGridLoop, w::kDims);
  return {std::move(code), {"box_copy"}};
}

KernelSource reduce_kernel(const Node& node) {
  const DType in = node.operands[0]->spec.dtype, out = node.spec.dtype;
  const Reduction r = reduction(node.op, in, out, node.attrs.tie_break);
  namespace w = reduce_words;
  std::string code = prelude_source();
  if (r.acc == "Pair") code += fmt::format("struct Pair {{ {} v; sl::i64 i; }};\n", compute_type(in));
  code += fmt::format(
      "typedef {0} Acc;\n"
      "__device__ __forceinline__ Acc combine(Acc p, Acc q) {{ return {1}; }}\n"
      "__device__ __forceinline__ Acc lift({2} x, sl::i64 r) {{ (void)r; return {3}; }}\n"
      "__device__ __forceinline__ {4} finish(Acc p) {{ return {5}; }}\n"
      "__device__ __forceinline__ Acc element(const sl::Words<{6}>& a, sl::i64 base, sl::i64 r) {{\n"
      "  const sl::i64* p = (const sl::i64*)a.w;\n"
      "  const int rank = (int)p[{7}];\n"
      "  const sl::i64 at = base + (rank == 1 ? r * p[{9}] : sl::offset_of(r, rank, p + {8}, p + {9}));\n"
      "  return lift({10}, r);\n"
      "}}\n",
      r.acc, r.combine, compute_type(in), r.lift, storage_type(out), r.finish, w::kWords, w::kReducedRank,
      w::kReducedDims, w::kReducedStrides, load(in, pointer(storage_type(in), w::kSource, false) + "[at]"));
  const std::string setup = fmt::format(
      "  const sl::i64* p = (const sl::i64*)a.w;\n"
      "  {0}* dst = ({0}*)a.w[{1}];\n"
      "  const sl::i64 outputs = p[{2}], reduced = p[{3}];\n"
      "  const int kept_rank = (int)p[{4}];\n",
      storage_type(out), w::kResult, w::kOutputs, w::kReduced, w::kKeptRank);
  const std::string base = fmt::format("kept_rank == 1 ? o * p[{1}] : sl::offset_of(o, kept_rank, p + {0}, p + {1})",
                                       w::kKeptDims, w::kKeptStrides);
  // A block per output: its threads share the elements, then combine in
  // shared memory, halving the active threads each round. Or a thread per
  // output, walking its elements alone. One kernel for both: a compile each.
  code += head("reduce", w::kWords) + setup +
          fmt::format("  if (p[{3}]) {{\n"
                      "    __shared__ Acc shared[{0}];\n"
                      "    for (sl::i64 o = blockIdx.x; o < outputs; o += gridDim.x) {{\n"
                      "      const sl::i64 base = {1};\n"
                      "      Acc acc = {2};\n"
                      "      for (sl::i64 r = threadIdx.x; r < reduced; r += blockDim.x) acc = combine(acc, element(a, base, r));\n"
                      "      shared[threadIdx.x] = acc;\n"
                      "      __syncthreads();\n"
                      "      for (unsigned step = blockDim.x / 2; step > 0; step /= 2) {{\n"
                      "        if (threadIdx.x < step) shared[threadIdx.x] = combine(shared[threadIdx.x], shared[threadIdx.x + step]);\n"
                      "        __syncthreads();\n"
                      "      }}\n"
                      "      if (threadIdx.x == 0) dst[o] = finish(shared[0]);\n"
                      "      __syncthreads();\n"
                      "    }}\n"
                      "    return;\n"
                      "  }}\n"
                      "  for (sl::i64 o = (sl::i64)blockIdx.x * blockDim.x + threadIdx.x; o < outputs; o += (sl::i64)gridDim.x * blockDim.x) {{\n"
                      "    const sl::i64 base = {1};\n"
                      "    Acc acc = {2};\n"
                      "    for (sl::i64 r = 0; r < reduced; ++r) acc = combine(acc, element(a, base, r));\n"
                      "    dst[o] = finish(acc);\n"
                      "  }}\n"
                      "}}\n",
                      kBlockThreads, base, r.identity, w::kBlockPerOutput);
  return {std::move(code), {"reduce"}};
}

KernelSource creation_kernel(const Node& node) {
  const Shape& shape = node.spec.shape;
  const DType t = node.spec.dtype;
  // The value of element i as an integer count c, converted as the host does.
  std::string count;
  if (node.op == Op::Iota) {
    if (node.attrs.axis < 0) {
      count = "i";
    } else {
      int64_t inner = 1;
      for (int j = static_cast<int>(node.attrs.axis) + 1; j < shape.rank(); ++j) inner *= shape.dim(j);
      count = fmt::format("(i / {} % {})", inner, shape.dim(static_cast<int>(node.attrs.axis)));
    }
  } else if (node.op == Op::Eye) {
    const int64_t cols = shape.dim(shape.rank() - 1), rows = shape.dim(shape.rank() - 2);
    count = fmt::format("(sl::i64)((i / {0} % {1}) == (i % {0}))", cols, rows);
  } else {
    throw InternalError(error_message("cuda: creation", "op", "iota or eye", std::string(op_name(node.op))));
  }
  const std::string value = is_narrow(t) ? "(float)c" : fmt::format("sl::as_type<{}>(c)", compute_type(t));
  std::string code = prelude_source() + head("create", 1) + fmt::format("  const sl::i64 n = {};\n", shape.size()) +
                     kGridLoop +
                     fmt::format("    const sl::i64 c = {};\n    {}[i] = {};\n  }}\n}}\n", count,
                                 pointer(storage_type(t), 0, true), store(t, value));
  return {std::move(code), {"create"}};
}

KernelSource dot_kernel(DType dtype) {
  namespace w = dot_words;
  const std::string t = storage_type(dtype);
  // Integers wrap in their type; floats accumulate in their compute type
  // (f32 for f16 and bf16), rounded once when stored.
  std::string acc, term, result;
  if (is_integer(dtype)) {
    acc = fmt::format("typedef sl::wrap_type<{0}>::type W;\n    W acc = 0;\n", t);
    term = "acc += (W)x[q] * (W)y[q * nn];\n";
    result = fmt::format("({})acc", t);
  } else {
    const std::string c = compute_type(dtype);
    acc = is_complex(dtype) ? fmt::format("{0} acc = sl::mk(({1})0, ({1})0);\n", c, compute_type(to_real(dtype)))
                            : fmt::format("{} acc = 0;\n", c);
    term = fmt::format("acc = sl::add(acc, sl::multiply({}, {}));\n", load(dtype, "x[q]"), load(dtype, "y[q * nn]"));
    result = store(dtype, "acc");
  }
  std::string code = prelude_source() + head("dot", w::kWords);
  code += fmt::format(
      "  const sl::i64* p = (const sl::i64*)a.w;\n"
      "  const {0}* A = (const {0}*)a.w[{1}];\n"
      "  const {0}* B = (const {0}*)a.w[{2}];\n"
      "  {0}* C = ({0}*)a.w[{3}];\n"
      "  const sl::i64 m = p[{4}], nn = p[{5}], k = p[{6}], n = p[{7}] * m * nn;\n"
      "{8}"
      "    const sl::i64 b = i / (m * nn), row = i / nn % m, col = i % nn;\n"
      "    {9}"
      "    const {0}* x = A + (b * m + row) * k;\n"
      "    const {0}* y = B + b * k * nn + col;\n"
      "    for (sl::i64 q = 0; q < k; ++q) {10}"
      "    C[i] = {11};\n"
      "  }}\n"
      "}}\n",
      t, w::kA, w::kB, w::kC, w::kM, w::kN, w::kK, w::kBatch, kGridLoop, acc, term, result);
  return {std::move(code), {"dot"}};
}

KernelSource scale_kernel(DType dtype) {
  namespace w = scale_words;
  const std::string real = compute_type(to_real(dtype));
  std::string code = prelude_source() + head("scale", w::kWords);
  code += fmt::format(
      "  {0}* x = ({0}*)a.w[{1}];\n"
      "  const sl::i64 n = (sl::i64)a.w[{2}];\n"
      "  const {3} s = ({3})sl::double_of(a.w[{4}]);\n"
      "{5}"
      "    x[i].re *= s;\n"
      "    x[i].im *= s;\n"
      "  }}\n"
      "}}\n",
      storage_type(dtype), w::kData, w::kCount, real, w::kScale, kGridLoop);
  return {std::move(code), {"scale"}};
}

}  // namespace sluice::cuda
