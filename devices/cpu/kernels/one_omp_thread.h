#pragma once
// Debian's oneDNN runs on OpenMP, while oneTBB owns the cores here
// (thread_pool.h): every thread that enters oneDNN (conv_dnnl.cpp, dot.cpp's
// f32 products) holds a OneOmpThread for the call, so that no OpenMP team is
// ever started and oneTBB alone shares the work out.

#include <omp.h>

namespace sluice::cpu {

// omp_set_num_threads sets the calling thread's count only, and that thread
// may be the application's (a small product runs on its caller, a
// parallel_for runs parts on its caller too): its count is put back afterwards.
class OneOmpThread {
 public:
  OneOmpThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOmpThread() { omp_set_num_threads(saved_); }
  OneOmpThread(const OneOmpThread&) = delete;
  OneOmpThread& operator=(const OneOmpThread&) = delete;

 private:
  int saved_;
};

}  // namespace sluice::cpu
