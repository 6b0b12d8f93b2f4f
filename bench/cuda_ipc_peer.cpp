// The other process of cuda_ipc_64MiB (bench/cuda_ipc.cpp): for each line on
// stdin, a Tensor::to_pointer handle of N f32 on the GPU, opens it
// (from_pointer), copies it into a tensor of its own on the same GPU, waits
// for the copy and answers with a line. argv[1]: N.

#include <cstdlib>
#include <iostream>
#include <string>

#include <sluice/devices/backend.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: bench_cuda_ipc_peer ELEMENTS\n";
    return 2;
  }
  const sluice::Spec spec{sluice::DType::F32, sluice::Shape{std::atoll(argv[1])}};
  try {
    // The GPU is shared with the process whose memory this one opens: its
    // memory taken as needed, not a fraction reserved at start.
    sluice::client("cuda", {.preallocate = false});
    for (std::string handle; std::getline(std::cin, handle);) {
      const sluice::Tensor shared =
          sluice::from_pointer({.mode = sluice::PointerMode::Ipc, .handle = handle}, spec);
      shared.to(shared.device()).wait();
      std::cout << "copied" << std::endl;
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_cuda_ipc_peer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
