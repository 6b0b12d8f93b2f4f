// Fft and Ifft along the last axis with FFTW: fftwf_* for c64, fftw_* for
// c128; Ifft scales by 1/n, as Nx.
//
// Rows are transformed in chunks of a few rows, one plan_many call per chunk,
// chunks spread across oneTBB's workers; every plan runs single-threaded
// (FFTW with 2 threads on one small transform is 6x slower than with 1).
// Plans are made once per (dtype, length, direction, rows per call,
// in-place, aligned) and kept for the life of the process. Making a plan is
// not thread-safe in FFTW, so the cache holds a mutex while it plans;
// executing a plan on new arrays (fftw_execute_dft) is thread-safe.
// Plans are measured (FFTW_MEASURE, on scratch arrays, since measuring
// overwrites them) up to kMeasureLength, and estimated above. Measured
// plans are kept as FFTW wisdom in a file shared by the machine's processes
// (fft_wisdom.h), so each is measured once, not once per process.

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <sluice/devices/cpu/kernels/fft_wisdom.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

// Rows per plan_many call: about this many bytes, so a chunk's input and
// output stay in L2 while it is transformed (and scaled, for Ifft).
constexpr int64_t kChunkBytes = int64_t{64} * 1024;
// Longer transforms are planned with FFTW_ESTIMATE: measuring them takes
// seconds. Up to this length measured plans run up to 1.7x faster (length
// 1000) and take 0.1-0.5 s to make, once per process.
constexpr int64_t kMeasureLength = 8192;

// FFTW_MEASURE picks among algorithms by timing them, so two processes may
// pick differently and round differently. SLUICE_FFT_PLANS=estimate plans
// by FFTW's heuristics alone, the same in every process: what a run
// restored from a checkpoint needs to end bit-identical to one without a
// fault. Read once, at the first plan.
bool measured_plans() {
  static const bool measured = [] {
    const char* v = std::getenv("SLUICE_FFT_PLANS");
    const std::string value = v ? v : "";
    if (value.empty() || value == "measure") return true;
    if (value == "estimate") return false;
    throw ConfigError(error_message("SLUICE_FFT_PLANS", "", "'measure' or 'estimate'", "'" + value + "'"));
  }();
  return measured;
}

// FFTW's exported wisdom, which the caller frees with free().
std::string owned_string(char* text) {
  std::string s = text ? text : "";
  std::free(text);
  return s;
}

template <typename C>
struct Fftw;

template <>
struct Fftw<complex64> {
  using Plan = fftwf_plan;
  using Complex = fftwf_complex;
  static Complex* alloc(int64_t n) { return fftwf_alloc_complex(static_cast<size_t>(n)); }
  static void free(Complex* p) { fftwf_free(p); }
  static Plan plan(int n, int rows, Complex* in, Complex* out, int sign, unsigned flags) {
    return fftwf_plan_many_dft(1, &n, rows, in, nullptr, 1, n, out, nullptr, 1, n, sign, flags);
  }
  static void execute(Plan p, Complex* in, Complex* out) { fftwf_execute_dft(p, in, out); }
  static int alignment_of(const void* p) {
    return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p)));
  }
  static constexpr FftwWisdomApi wisdom{
      "fftwf_wisdom", [](const char* text) { return fftwf_import_wisdom_from_string(text) != 0; },
      [] { return owned_string(fftwf_export_wisdom_to_string()); }};
};

template <>
struct Fftw<complex128> {
  using Plan = fftw_plan;
  using Complex = fftw_complex;
  static Complex* alloc(int64_t n) { return fftw_alloc_complex(static_cast<size_t>(n)); }
  static void free(Complex* p) { fftw_free(p); }
  static Plan plan(int n, int rows, Complex* in, Complex* out, int sign, unsigned flags) {
    return fftw_plan_many_dft(1, &n, rows, in, nullptr, 1, n, out, nullptr, 1, n, sign, flags);
  }
  static void execute(Plan p, Complex* in, Complex* out) { fftw_execute_dft(p, in, out); }
  static int alignment_of(const void* p) {
    return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p)));
  }
  static constexpr FftwWisdomApi wisdom{
      "fftw_wisdom", [](const char* text) { return fftw_import_wisdom_from_string(text) != 0; },
      [] { return owned_string(fftw_export_wisdom_to_string()); }};
};

struct PlanKey {
  int64_t n, rows;
  int sign;
  bool in_place, aligned;
  auto operator<=>(const PlanKey&) const = default;
};

// FFTW's planner and wisdom calls of one precision are not thread-safe:
// each is made under its precision's lock.
template <typename C>
std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The plan for `key`, made on first use. Thread-safe.
template <typename C>
typename Fftw<C>::Plan plan_for(const PlanKey& key) {
  using F = Fftw<C>;
  // Never destroyed, like the plans it holds.
  static auto& plans = *new std::map<PlanKey, typename F::Plan>();
  std::lock_guard lock(planner_mutex<C>());
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  const int64_t elements = key.n * key.rows;
  typename F::Complex* in = F::alloc(elements);
  typename F::Complex* out = key.in_place ? in : F::alloc(elements);
  const bool measure = key.n <= kMeasureLength && measured_plans();
  unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  if (!key.aligned) flags |= FFTW_UNALIGNED;
  const int n = static_cast<int>(key.n), rows = static_cast<int>(key.rows);
  typename F::Plan plan = nullptr;
  if (measure) {
    static bool imported = false;  // guarded by planner_mutex<C>()
    if (!imported) fft_wisdom_import(F::wisdom);
    imported = true;
    // Asked first for a plan from wisdom alone, FFTW says whether it has to
    // measure, and so whether the file needs the new wisdom.
    plan = F::plan(n, rows, in, out, key.sign, flags | FFTW_WISDOM_ONLY);
    fft_wisdom_count(plan != nullptr);
  }
  if (plan == nullptr) {
    plan = F::plan(n, rows, in, out, key.sign, flags);
    if (plan != nullptr && measure) fft_wisdom_export(F::wisdom);
  }
  if (!key.in_place) F::free(out);
  F::free(in);
  if (plan == nullptr) {
    throw DeviceError(error_message("fft", fmt::format("length {} over {} rows", key.n, key.rows),
                                    "a plan from FFTW", "none (FFTW could not plan the transform)"));
  }
  plans.emplace(key, plan);
  return plan;
}

template <typename C>
void transform(const C* in, C* out, int64_t rows, int64_t n, int sign) {
  using F = Fftw<C>;
  using Real = typename C::value_type;
  const int64_t chunk = std::clamp<int64_t>(kChunkBytes / (n * static_cast<int64_t>(sizeof(C))), 1, rows);
  const int64_t full_chunks = rows / chunk, chunks = (rows + chunk - 1) / chunk;
  const bool in_place = static_cast<const void*>(in) == static_cast<const void*>(out);
  // Calls `step` rows apart are all aligned when the first two are (FFTW's
  // alignment then divides the step).
  auto aligned = [&](int64_t step) {
    return F::alignment_of(in) == 0 && F::alignment_of(out) == 0 && F::alignment_of(in + step * n) == 0 &&
           F::alignment_of(out + step * n) == 0;
  };
  // Whole chunks with one plan; the rows left over one at a time, with a
  // plan that reuses the wisdom gathered for the first.
  const typename F::Plan full = plan_for<C>({n, chunk, sign, in_place, aligned(chunk)});
  const typename F::Plan single =
      full_chunks == chunks ? full : plan_for<C>({n, 1, sign, in_place, aligned(1)});
  const Real scale = Real(1) / static_cast<Real>(n);
  split_work(chunks, chunk * n, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * chunk, count = std::min(chunk, rows - r0);
      // FFTW's out-of-place complex transforms leave their input as it was.
      auto* x = reinterpret_cast<typename F::Complex*>(const_cast<C*>(in + r0 * n));
      auto* y = reinterpret_cast<typename F::Complex*>(out + r0 * n);
      if (c < full_chunks) {
        F::execute(full, x, y);
      } else {
        for (int64_t r = 0; r < count; ++r) F::execute(single, x + r * n, y + r * n);
      }
      if (sign == FFTW_BACKWARD) {
        Real* __restrict v = reinterpret_cast<Real*>(y);
        for (int64_t i = 0; i < 2 * count * n; ++i) v[i] *= scale;
      }
    }
  });
}

}  // namespace

void run_fft(const Node& node, const void* in, void* out) {
  const Spec& spec = node.operands[0]->spec;
  if (spec.size() == 0) return;
  const int64_t n = spec.shape.dim(spec.shape.rank() - 1);
  const int64_t rows = spec.size() / n;
  const int sign = node.op == Op::Ifft ? FFTW_BACKWARD : FFTW_FORWARD;
  switch (spec.dtype) {
    case DType::C64:
      return transform(static_cast<const complex64*>(in), static_cast<complex64*>(out), rows, n, sign);
    case DType::C128:
      return transform(static_cast<const complex128*>(in), static_cast<complex128*>(out), rows, n, sign);
    default:
      throw TypeError(
          error_message(op_name(node.op), "argument tensor", "c64 or c128", dtype_name(spec.dtype)));
  }
}

std::string fft_plans() {
  // Estimated plans are the same in every process: only measured ones count.
  const FftWisdomStatus status = fft_wisdom_status();
  if (status.plans_measured + status.plans_from_wisdom == 0) return {};
  std::string text;
  {
    std::lock_guard lock(planner_mutex<complex128>());
    text += Fftw<complex128>::wisdom.export_text();
  }
  std::lock_guard lock(planner_mutex<complex64>());
  return text + Fftw<complex64>::wisdom.export_text();
}

void use_fft_plans(const std::string& text) {
  std::scoped_lock lock(planner_mutex<complex128>(), planner_mutex<complex64>());
  fft_wisdom_pin(text, {&Fftw<complex128>::wisdom, &Fftw<complex64>::wisdom});
}

}  // namespace sluice::cpu
