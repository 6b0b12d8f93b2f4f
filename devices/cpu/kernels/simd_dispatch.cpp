// Chooses the kernel table once: the widest ISA the CPU supports, capped by
// the SLUICE_ISA environment variable (isa.h).

#include <cstdlib>
#include <string_view>

#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/base/detail/log.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

bool cpu_supports(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::Sse4:
      return __builtin_cpu_supports("sse4.2");
    case Isa::Avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case Isa::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             cpu_supports(Isa::Avx2);
  }
  return false;
}

Isa choose_isa() {
  Isa best = cpu_supports(Isa::Avx512) ? Isa::Avx512 : cpu_supports(Isa::Avx2) ? Isa::Avx2 : Isa::Sse4;
  if (const char* cap = std::getenv("SLUICE_ISA"); cap != nullptr && *cap != '\0') {
    std::string_view want = cap;
    bool known = false;
    for (Isa isa : {Isa::Sse4, Isa::Avx2, Isa::Avx512}) {
      if (want != isa_name(isa)) continue;
      known = true;
      if (isa < best) best = isa;
    }
    if (!known) logger().warn("SLUICE_ISA={}: expected sse4, avx2 or avx512; ignored", want);
  }
  logger().debug("cpu kernels: {}", isa_name(best));
  return best;
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Sse4: return "sse4";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

const KernelTable* kernel_table(Isa isa) {
  if (!cpu_supports(isa)) return nullptr;
  switch (isa) {
    case Isa::Sse4: return &sse4::kernel_table();
    case Isa::Avx2: return &avx2::kernel_table();
    case Isa::Avx512: return &avx512::kernel_table();
  }
  return nullptr;
}

const KernelTable& kernel_table() {
  static const KernelTable* table = kernel_table(choose_isa());
  if (table == nullptr)
    throw DeviceError(error_message("cpu kernels", "", "a CPU with SSE4.2 (x86-64-v2) at least", "none"));
  return *table;
}

}  // namespace sluice::cpu
