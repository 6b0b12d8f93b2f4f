// Linear algebra on cuSOLVER and cuBLAS, in f32, f64, c64 and c128, batched
// over the leading axes one matrix per call: cholesky (potrf), lu (getrf),
// solve (getrf + getrs), qr (geqrf + orgqr/ungqr), eigh (syevd),
// triangular_solve (cuBLAS's trsm). Results are the host's (ops.h): a matrix
// cuSOLVER cannot factor becomes NaN, lu of a singular matrix still gives
// p, l and u.
//
// cuSOLVER stores matrices by column, sluice by row: a row-major matrix read
// by column is its transpose. cholesky and eigh take that as it is (for a
// Hermitian a, the transpose is the conjugate: potrf's upper factor read by
// row is the lower one; eigh's vectors are conjugated back); trsm solves
// the transposed equation (left and right, lower and upper swap); lu, solve
// and qr transpose their operands into scratch first and their factors back
// (matrix_copy, kernels/algorithms.cuh). Where cuSOLVER's conventions differ
// from LAPACK's (qr's reflector of a column starting with -0.0), the
// factors are put back as LAPACK makes them.

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_libraries.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cuda {
namespace {

cudaDataType data_type(DType t) {
  switch (t) {
    case DType::F32: return CUDA_R_32F;
    case DType::F64: return CUDA_R_64F;
    case DType::C64: return CUDA_C_32F;
    case DType::C128: return CUDA_C_64F;
    default: break;
  }
  throw InternalError(error_message("cuda: linear algebra", "dtype", "f32, f64, c64 or c128", t));
}

// A batch of `count` matrices [rows][cols]: an operand's leading axes, then its last two.
struct Matrices {
  int64_t count = 1, rows = 0, cols = 0;
  int64_t size() const { return rows * cols; }
};
Matrices matrices_of(const Shape& s) {
  Matrices m;
  for (int i = 0; i + 2 < s.rank(); ++i) m.count *= s.dim(i);
  m.rows = s.dim(s.rank() - 2);
  m.cols = s.dim(s.rank() - 1);
  return m;
}

// One matrix_copy (linalg_words): `count` result matrices [rows][cols].
struct Copy {
  int64_t count = 1, rows = 0, cols = 0;
  bool transpose = false;
  int64_t ld = 0, stride = 0, source_rows = 0;
  LinalgPart part = LinalgPart::All;
  bool conjugate = false;
};

class LinalgStep final : public CudaUnit {
 public:
  LinalgStep(const Node& node, CudaDevice& device)
      : node_(node),
        what_(op_name(node.op)),
        dtype_(node.operands[0]->spec.dtype),
        type_(data_type(dtype_)),
        elem_(dtype_size(dtype_)),
        a_(matrices_of(node.operands[0]->spec.shape)),
        kernels_(load_kernels(linalg_kernel(dtype_), device.arch())) {
    if (node.op == Op::Eigh) real_kernels_ = load_kernels(linalg_kernel(to_real(dtype_)), device.arch());
    if (node.op == Op::TriangularSolve || node.op == Op::Solve) {
      const Shape& b = node.spec.shape;
      vector_ = b.rank() == node.operands[0]->spec.shape.rank() - 1;
      rhs_ = vector_ ? b.dim(b.rank() - 1) : b.dim(b.rank() - 2) * b.dim(b.rank() - 1);
    }
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (a_.count == 0) return;
    switch (node_.op) {
      case Op::Cholesky: return cholesky(ctx, in[0], out[0]);
      case Op::TriangularSolve: return triangular_solve(ctx, in[0], in[1], out[0]);
      case Op::Solve: return solve(ctx, in[0], in[1], out[0]);
      case Op::Lu: return lu(ctx, in[0], out[0], out[1], out[2]);
      case Op::Qr: return qr(ctx, in[0], out[0], out[1]);
      case Op::Eigh: return eigh(ctx, in[0], out[0], out[1]);
      default: break;
    }
    throw InternalError(error_message("cuda: linear algebra", "op", "a linear algebra op", std::string(what_)));
  }

 private:
  // ---- what every op uses

  char* scratch(StepContext& ctx, int64_t bytes) const {
    std::shared_ptr<void> memory = ctx.device.allocate(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
    ctx.keep.push_back(memory);
    return static_cast<char*>(memory.get());
  }
  // Host workspace of the generic API, kept until the work is done.
  void* host_scratch(StepContext& ctx, size_t bytes) const {
    auto memory = std::make_shared<std::vector<char>>(std::max<size_t>(bytes, 1));
    ctx.keep.push_back(memory);
    return memory->data();
  }
  void copy(StepContext& ctx, void* to, const void* from, int64_t bytes) const {
    if (bytes > 0 && to != from)
      check(cudaMemcpyAsync(to, from, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, ctx.stream),
            ctx.device.who(), what_ + ": copying");
  }
  void matrix_copy(StepContext& ctx, const void* from, void* to, const Copy& c, bool real = false) const {
    namespace w = linalg_words;
    const int64_t n = c.count * c.rows * c.cols;
    if (n == 0) return;
    std::vector<Word> words(w::kWords, 0);
    words[w::kSource] = word(from);
    words[w::kResult] = word(to);
    words[w::kCount] = word(c.count);
    words[w::kRows] = word(c.rows);
    words[w::kCols] = word(c.cols);
    words[w::kTranspose] = word(int64_t{c.transpose});
    words[w::kSourceLd] = word(c.ld);
    words[w::kSourceStride] = word(c.stride);
    words[w::kSourceRows] = word(c.source_rows);
    words[w::kPart] = word(static_cast<int64_t>(c.part));
    words[w::kConjugate] = word(int64_t{c.conjugate});
    launch((real ? real_kernels_ : kernels_)[0], loop_launch(n, ctx.device.multiprocessors()), words, ctx.stream,
           ctx.device.who(), what_);
  }
  // Each of `count` matrices of `size` elements at data becomes NaN where info is not 0.
  void nan_where_failed(StepContext& ctx, const int* info, void* data, int64_t count, int64_t size,
                        bool real = false) const {
    namespace w = linalg_words;
    if (count * size == 0) return;
    std::vector<Word> words(w::kWords, 0);
    words[w::kInfo] = word(info);
    words[w::kResult] = word(data);
    words[w::kCount] = word(count);
    words[w::kRows] = word(int64_t{1});
    words[w::kCols] = word(size);
    launch((real ? real_kernels_ : kernels_)[1], loop_launch(count * size, ctx.device.multiprocessors()), words,
           ctx.stream, ctx.device.who(), what_);
  }
  char* at(void* base, int64_t i, int64_t elements) const {
    return static_cast<char*>(base) + i * elements * elem_;
  }
  int* infos(StepContext& ctx) const { return reinterpret_cast<int*>(scratch(ctx, a_.count * int64_t{sizeof(int)})); }

  // The transpose of a's matrices [rows][cols] into scratch: cuSOLVER's
  // column-major a.
  char* column_major(StepContext& ctx, const void* a) const {
    char* t = scratch(ctx, a_.count * a_.size() * elem_);
    matrix_copy(ctx, a, t,
                {.count = a_.count, .rows = a_.cols, .cols = a_.rows, .transpose = true, .ld = a_.cols,
                 .stride = a_.size(), .source_rows = a_.rows});
    return t;
  }

  // getrf of each column-major n x n matrix at lu, pivots and statuses.
  void getrf(StepContext& ctx, char* lu, int64_t* pivots, int* info) const {
    const CusolverLibrary& s = cusolver_library();
    const int64_t n = a_.rows;
    size_t device_bytes = 0, host_bytes = 0;
    check_cusolver(s.getrf_buffer_size(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(), n, n,
                                       type_, lu, n, type_, &device_bytes, &host_bytes),
                   ctx.device.who(), "cusolverDnXgetrf_bufferSize");
    char* work = scratch(ctx, static_cast<int64_t>(device_bytes));
    void* host = host_scratch(ctx, host_bytes);
    for (int64_t i = 0; i < a_.count; ++i)
      check_cusolver(
          s.getrf(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(), n, n, type_,
                  at(lu, i, n * n), n, pivots + i * n, type_, work, device_bytes, host, host_bytes, info + i),
          ctx.device.who(), "cusolverDnXgetrf");
  }

  // ---- the ops

  void cholesky(StepContext& ctx, const void* a, void* l) const {
    const int64_t n = a_.rows;
    if (n == 0) return;
    copy(ctx, l, a, a_.count * a_.size() * elem_);
    int* info = infos(ctx);
    const CusolverLibrary& s = cusolver_library();
    size_t device_bytes = 0, host_bytes = 0;
    check_cusolver(
        s.potrf_buffer_size(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(),
                            CUBLAS_FILL_MODE_UPPER, n, type_, l, n, type_, &device_bytes, &host_bytes),
        ctx.device.who(), "cusolverDnXpotrf_bufferSize");
    char* work = scratch(ctx, static_cast<int64_t>(device_bytes));
    void* host = host_scratch(ctx, host_bytes);
    for (int64_t i = 0; i < a_.count; ++i)
      check_cusolver(
          s.potrf(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(), CUBLAS_FILL_MODE_UPPER, n,
                  type_, at(l, i, a_.size()), n, type_, work, device_bytes, host, host_bytes, info + i),
          ctx.device.who(), "cusolverDnXpotrf");
    // The factor is the lower triangle read by row; potrf leaves the rest as it was.
    matrix_copy(ctx, l, l, {.count = a_.count, .rows = n, .cols = n, .ld = n, .stride = a_.size(), .source_rows = n,
                            .part = LinalgPart::Lower});
    nan_where_failed(ctx, info, l, a_.count, a_.size());
  }

  // op(a) x = b (left) or x op(a) = b: read by column, a is m = aᵀ and x
  // and b are transposed, so the left side is cuBLAS's right one, the lower
  // triangle its upper, and op(a)ᵀ is m (a), mᵀ (aᵀ) or mᴴ (aᴴ): the same op
  // of m.
  void triangular_solve(StepContext& ctx, const void* a, const void* b, void* x) const {
    const LinAlgAttrs& o = node_.attrs.linalg;
    const int64_t k = a_.rows;
    copy(ctx, x, b, a_.count * rhs_ * elem_);
    if (rhs_ == 0 || k == 0) return;
    const Shape& bs = node_.spec.shape;
    const int64_t rows = vector_ ? (o.left_side ? k : 1) : bs.dim(bs.rank() - 2), cols = rhs_ / rows;
    const cublasOperation_t op = o.transform == TriangularTransform::None        ? CUBLAS_OP_N
                                 : o.transform == TriangularTransform::Transpose ? CUBLAS_OP_T
                                                                                 : CUBLAS_OP_C;
    const cublasSideMode_t side = o.left_side ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
    const cublasFillMode_t fill = o.lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const int mm = static_cast<int>(cols), nn = static_cast<int>(rows), kk = static_cast<int>(k), ld = static_cast<int>(cols);
    const CublasLibrary& l = cublas_library();
    cublasHandle_t h = ctx.device.cublas(ctx.stream);
    for (int64_t i = 0; i < a_.count; ++i) {
      const void* mi = static_cast<const char*>(a) + i * a_.size() * elem_;
      void* xi = at(x, i, rhs_);
      int status = 0;
      switch (dtype_) {
        case DType::F32: {
          const float one = 1;
          status = l.strsm(h, side, fill, op, CUBLAS_DIAG_NON_UNIT, mm, nn, &one, static_cast<const float*>(mi), kk,
                           static_cast<float*>(xi), ld);
          break;
        }
        case DType::F64: {
          const double one = 1;
          status = l.dtrsm(h, side, fill, op, CUBLAS_DIAG_NON_UNIT, mm, nn, &one, static_cast<const double*>(mi), kk,
                           static_cast<double*>(xi), ld);
          break;
        }
        case DType::C64: {
          const cuComplex one{1, 0};
          status = l.ctrsm(h, side, fill, op, CUBLAS_DIAG_NON_UNIT, mm, nn, &one, static_cast<const cuComplex*>(mi), kk,
                           static_cast<cuComplex*>(xi), ld);
          break;
        }
        default: {
          const cuDoubleComplex one{1, 0};
          status = l.ztrsm(h, side, fill, op, CUBLAS_DIAG_NON_UNIT, mm, nn, &one,
                           static_cast<const cuDoubleComplex*>(mi), kk, static_cast<cuDoubleComplex*>(xi), ld);
        }
      }
      check_cublas(status, ctx.device.who(), "trsm");
    }
  }

  void solve(StepContext& ctx, const void* a, const void* b, void* x) const {
    const int64_t n = a_.rows, m = n == 0 ? 0 : rhs_ / n;
    copy(ctx, x, b, a_.count * rhs_ * elem_);
    if (n == 0 || rhs_ == 0) return;
    char* lu = column_major(ctx, a);
    auto* pivots = reinterpret_cast<int64_t*>(scratch(ctx, a_.count * n * int64_t{sizeof(int64_t)}));
    int* info = infos(ctx);
    int* solved = infos(ctx);
    getrf(ctx, lu, pivots, info);
    // b read by column: a vector as it is, a matrix [n][m] transposed.
    char* columns = m == 1 ? static_cast<char*>(x) : scratch(ctx, a_.count * rhs_ * elem_);
    if (m != 1)
      matrix_copy(ctx, x, columns,
                  {.count = a_.count, .rows = m, .cols = n, .transpose = true, .ld = m, .stride = rhs_, .source_rows = n});
    const CusolverLibrary& s = cusolver_library();
    for (int64_t i = 0; i < a_.count; ++i)
      check_cusolver(
          s.getrs(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(), CUBLAS_OP_N, n, m, type_,
                  at(lu, i, n * n), n, pivots + i * n, type_, at(columns, i, rhs_), n, solved + i),
          ctx.device.who(), "cusolverDnXgetrs");
    if (m != 1)
      matrix_copy(ctx, columns, x,
                  {.count = a_.count, .rows = n, .cols = m, .transpose = true, .ld = n, .stride = rhs_, .source_rows = m});
    nan_where_failed(ctx, info, x, a_.count, rhs_);
  }

  void lu(StepContext& ctx, const void* a, void* p, void* l, void* u) const {
    const int64_t n = a_.rows;
    if (n == 0) return;
    char* factors = column_major(ctx, a);
    auto* pivots = reinterpret_cast<int64_t*>(scratch(ctx, a_.count * n * int64_t{sizeof(int64_t)}));
    int* info = infos(ctx);  // a zero pivot (singular a) still leaves complete factors
    getrf(ctx, factors, pivots, info);
    const Copy by_row{.count = a_.count, .rows = n, .cols = n, .transpose = true, .ld = n, .stride = n * n, .source_rows = n};
    Copy lower = by_row, upper = by_row;
    lower.part = LinalgPart::UnitLower;
    upper.part = LinalgPart::Upper;
    matrix_copy(ctx, factors, l, lower);
    matrix_copy(ctx, factors, u, upper);
    check(cudaMemsetAsync(p, 0, static_cast<size_t>(a_.count * n * n) * sizeof(int64_t), ctx.stream), ctx.device.who(),
          "lu: clearing p");
    namespace w = linalg_words;
    std::vector<Word> words(w::kWords, 0);
    words[w::kSource] = word(pivots);
    words[w::kResult] = word(p);
    words[w::kScratch] = word(scratch(ctx, a_.count * n * int64_t{sizeof(int64_t)}));
    words[w::kCount] = word(a_.count);
    words[w::kRows] = word(n);
    launch(kernels_[2], loop_launch(a_.count, ctx.device.multiprocessors()), words, ctx.stream, ctx.device.who(), "lu: p");
  }

  void qr(StepContext& ctx, const void* a, void* q, void* r) const {
    const int64_t m = a_.rows, n = a_.cols, k = std::min(m, n);
    const int64_t qcols = node_.attrs.linalg.mode == QrMode::Complete ? m : k, rrows = qcols;
    if (m == 0 || qcols == 0) return;
    char* factors = column_major(ctx, a);
    char* tau = scratch(ctx, a_.count * std::max<int64_t>(k, 1) * elem_);
    int* info = infos(ctx);
    const CusolverLibrary& s = cusolver_library();
    if (k > 0) {
      size_t device_bytes = 0, host_bytes = 0;
      check_cusolver(s.geqrf_buffer_size(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(), m, n,
                                         type_, factors, m, type_, tau, type_, &device_bytes, &host_bytes),
                     ctx.device.who(), "cusolverDnXgeqrf_bufferSize");
      char* work = scratch(ctx, static_cast<int64_t>(device_bytes));
      void* host = host_scratch(ctx, host_bytes);
      for (int64_t i = 0; i < a_.count; ++i)
        check_cusolver(s.geqrf(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(), m, n, type_,
                               at(factors, i, m * n), m, type_, at(tau, i, k), type_, work, device_bytes,
                               host, host_bytes, info + i),
                       ctx.device.who(), "cusolverDnXgeqrf");
    }
    // r: the upper triangle of the factors, read by row.
    matrix_copy(ctx, factors, r,
                {.count = a_.count, .rows = rrows, .cols = n, .transpose = true, .ld = m, .stride = m * n,
                 .source_rows = n, .part = LinalgPart::Upper});
    // q starts as the reflectors in its first columns (orgqr reads k of them).
    char* qc = scratch(ctx, a_.count * m * qcols * elem_);
    matrix_copy(ctx, factors, qc,
                {.count = a_.count, .rows = qcols, .cols = m, .ld = m, .stride = m * n, .source_rows = n});
    orgqr(ctx, m, qcols, k, qc, tau, info);
    matrix_copy(ctx, qc, q,
                {.count = a_.count, .rows = m, .cols = qcols, .transpose = true, .ld = m, .stride = m * qcols,
                 .source_rows = qcols});
    // LAPACK's reflector for a first column starting with -0.0 has the sign
    // of -0.0; cuSOLVER's that of +0.0: such factors are flipped back (q's
    // first column, r's first row), so that q and r are numpy's.
    namespace w = linalg_words;
    std::vector<Word> words(w::kWords, 0);
    words[w::kSource] = word(a);
    words[w::kResult] = word(q);
    words[w::kSecond] = word(r);
    words[w::kCount] = word(a_.count);
    words[w::kRows] = word(m);
    words[w::kCols] = word(n);
    words[w::kSourceLd] = word(qcols);
    launch(kernels_[3], loop_launch(a_.count, ctx.device.multiprocessors()), words, ctx.stream, ctx.device.who(),
           "qr: signs");
  }

  void orgqr(StepContext& ctx, int64_t m, int64_t n, int64_t k, char* qc, char* tau, int* info) const {
    const CusolverLibrary& s = cusolver_library();
    cusolverDnHandle_t h = ctx.device.cusolver(ctx.stream);
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), kk = static_cast<int>(k);
    int lwork = 0;
    int status = 0;
    switch (dtype_) {
      case DType::F32: status = s.sorgqr_buffer_size(h, mm, nn, kk, reinterpret_cast<float*>(qc), mm, reinterpret_cast<float*>(tau), &lwork); break;
      case DType::F64: status = s.dorgqr_buffer_size(h, mm, nn, kk, reinterpret_cast<double*>(qc), mm, reinterpret_cast<double*>(tau), &lwork); break;
      case DType::C64: status = s.cungqr_buffer_size(h, mm, nn, kk, reinterpret_cast<cuComplex*>(qc), mm, reinterpret_cast<cuComplex*>(tau), &lwork); break;
      default: status = s.zungqr_buffer_size(h, mm, nn, kk, reinterpret_cast<cuDoubleComplex*>(qc), mm, reinterpret_cast<cuDoubleComplex*>(tau), &lwork);
    }
    check_cusolver(status, ctx.device.who(), "orgqr_bufferSize");
    char* work = scratch(ctx, std::max(lwork, 1) * elem_);
    for (int64_t i = 0; i < a_.count; ++i) {
      char* qi = at(qc, i, m * n);
      char* ti = at(tau, i, std::max<int64_t>(k, 1));
      switch (dtype_) {
        case DType::F32: status = s.sorgqr(h, mm, nn, kk, reinterpret_cast<float*>(qi), mm, reinterpret_cast<float*>(ti), reinterpret_cast<float*>(work), lwork, info + i); break;
        case DType::F64: status = s.dorgqr(h, mm, nn, kk, reinterpret_cast<double*>(qi), mm, reinterpret_cast<double*>(ti), reinterpret_cast<double*>(work), lwork, info + i); break;
        case DType::C64: status = s.cungqr(h, mm, nn, kk, reinterpret_cast<cuComplex*>(qi), mm, reinterpret_cast<cuComplex*>(ti), reinterpret_cast<cuComplex*>(work), lwork, info + i); break;
        default: status = s.zungqr(h, mm, nn, kk, reinterpret_cast<cuDoubleComplex*>(qi), mm, reinterpret_cast<cuDoubleComplex*>(ti), reinterpret_cast<cuDoubleComplex*>(work), lwork, info + i);
      }
      check_cusolver(status, ctx.device.who(), "orgqr");
    }
  }

  // syevd of a read by column (conj(a): a is Hermitian) on its upper
  // triangle (a's lower, read by row): its vectors, conjugated and read by
  // row, are a's.
  void eigh(StepContext& ctx, const void* a, void* w, void* v) const {
    const int64_t n = a_.rows;
    if (n == 0) return;
    char* vectors = scratch(ctx, a_.count * a_.size() * elem_);
    copy(ctx, vectors, a, a_.count * a_.size() * elem_);
    int* info = infos(ctx);
    const cudaDataType real = data_type(to_real(dtype_));
    const int64_t real_bytes = dtype_size(to_real(dtype_));
    const CusolverLibrary& s = cusolver_library();
    size_t device_bytes = 0, host_bytes = 0;
    check_cusolver(s.syevd_buffer_size(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(),
                                       CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, type_, vectors, n,
                                       real, w, type_, &device_bytes, &host_bytes),
                   ctx.device.who(), "cusolverDnXsyevd_bufferSize");
    char* work = scratch(ctx, static_cast<int64_t>(device_bytes));
    void* host = host_scratch(ctx, host_bytes);
    for (int64_t i = 0; i < a_.count; ++i)
      check_cusolver(s.syevd(ctx.device.cusolver(ctx.stream), ctx.device.cusolver_params(),
                             CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, type_,
                             at(vectors, i, a_.size()), n, real, static_cast<char*>(w) + i * n * real_bytes,
                             type_, work, device_bytes, host, host_bytes, info + i),
                     ctx.device.who(), "cusolverDnXsyevd");
    matrix_copy(ctx, vectors, v,
                {.count = a_.count, .rows = n, .cols = n, .transpose = true, .ld = n, .stride = a_.size(),
                 .source_rows = n, .conjugate = is_complex(dtype_)});
    nan_where_failed(ctx, info, v, a_.count, a_.size());
    nan_where_failed(ctx, info, w, a_.count, n, /*real=*/true);
  }

  const Node& node_;
  std::string what_;
  DType dtype_;
  cudaDataType type_;
  int64_t elem_;
  Matrices a_;
  std::vector<cudaKernel_t> kernels_, real_kernels_;
  bool vector_ = false;
  int64_t rhs_ = 0;  // elements of one right-hand side
};

}  // namespace

std::unique_ptr<CudaUnit> make_linalg_step(const Node& node, CudaDevice& device) {
  return std::make_unique<LinalgStep>(node, device);
}

}  // namespace sluice::cuda
