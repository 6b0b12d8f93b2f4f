#pragma once
// OpenBLAS and LAPACKE, loaded the first time a kernel calls them rather
// than linked. OpenBLAS starts its threads when it loads (one per core but
// one), and each spins, yielding, for 2^28 cycles (about 0.1 s) before it
// sleeps. Linked, every process using sluice paid that at its start, whether
// or not it ever made a product in double precision or factored a matrix:
// on 2 cores a program that used sluice and slept half a second took
// 0.125-0.13 s of CPU, against 0.005-0.008 s with the library loaded on
// first use, and the spinning thread contended with every other process of
// the host meanwhile. Now only a process that calls them pays it, once.

#include <complex>
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>
#include <lapacke.h>

// The functions sluice calls, each resolved by its C name: X(name).
#define SLUICE_BLAS_FUNCTIONS(X)                                                                            \
  X(openblas_get_num_threads)                                                                               \
  X(openblas_set_num_threads) X(cblas_sgemm) X(cblas_dgemm) X(cblas_cgemm) X(cblas_zgemm) X(cblas_strsm)    \
      X(cblas_dtrsm) X(cblas_ctrsm) X(cblas_ztrsm) X(LAPACKE_spotrf) X(LAPACKE_dpotrf) X(LAPACKE_cpotrf)    \
          X(LAPACKE_zpotrf) X(LAPACKE_sgesv) X(LAPACKE_dgesv) X(LAPACKE_cgesv) X(LAPACKE_zgesv)             \
              X(LAPACKE_sgetrf) X(LAPACKE_dgetrf) X(LAPACKE_cgetrf) X(LAPACKE_zgetrf) X(LAPACKE_sgeqrf)     \
                  X(LAPACKE_dgeqrf) X(LAPACKE_cgeqrf) X(LAPACKE_zgeqrf) X(LAPACKE_sorgqr) X(LAPACKE_dorgqr) \
                      X(LAPACKE_cungqr) X(LAPACKE_zungqr) X(LAPACKE_ssyevd) X(LAPACKE_dsyevd)               \
                          X(LAPACKE_cheevd) X(LAPACKE_zheevd)

namespace sluice::cpu {

struct BlasLibrary {
#define SLUICE_BLAS_POINTER(name) decltype(&::name) name = nullptr;
  SLUICE_BLAS_FUNCTIONS(SLUICE_BLAS_POINTER)
#undef SLUICE_BLAS_POINTER
};

// The libraries, loaded by the first call (from any thread); DeviceError
// naming the library or the function this process could not load.
const BlasLibrary& blas();

}  // namespace sluice::cpu
