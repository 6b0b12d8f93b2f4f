// python_interop IN OUT: a compiled C++ stage between a Python producer and
// a Python consumer, all three speaking sluice's wire format over ZeroMQ.
//
//   producer.py ──IN──> spectrum ──────────────────────> OUT ──> consumer.py
//   f32[1024] chunks    |rfft|, peak bin, and the mean            checks it all
//   of numpy sines      spectrum so far (acc: sum, count)         with numpy
//
// Run the three in any order (each waits for its peers):
//   python3 samples/python_interop/consumer.py ipc:///tmp/spectra 50 &
//   build/samples/python_interop ipc:///tmp/chunks ipc:///tmp/spectra &
//   python3 samples/python_interop/producer.py ipc:///tmp/chunks 50

#include <iostream>

#include <sluice/devices/backend.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr
        << "usage: python_interop IN OUT (ZeroMQ endpoints: receive chunks on IN, send spectra to OUT)\n";
    return 2;
  }
  constexpr int64_t kChunk = 1024, kBins = kChunk / 2;
  sluice::Pipeline p;
  // Receives (binding IN) until the producer's end of stream.
  auto chunks = p.source("from python", sluice::sources::zmq(argv[1], {sluice::f32({kChunk})}));
  auto spectrum = p.stage(
      "spectrum",
      [](sluice::Expr x, sluice::Expr total, sluice::Expr count) {
        sluice::Expr magnitude = sluice::slice(sluice::abs(sluice::fft(x)), {0}, {kBins});  // f32[512]
        sluice::Expr peak = sluice::argmax(magnitude);                                      // s64[]
        sluice::Expr new_total = total + magnitude, new_count = count + 1;
        return sluice::tuple(magnitude, peak, new_total / new_count, new_total, new_count);
      },
      {.acc = {sluice::zeros(sluice::f32({kBins})), sluice::scalar(0.0f)}});
  // Sends each result (connecting to OUT), then end of stream.
  auto out = p.sink("to python", sluice::sinks::zmq(argv[2]));
  p.connect(chunks, spectrum);
  p.connect(spectrum, out);
  sluice::PipelineResult result = p.run();
  std::cout << "python_interop: " << result.metrics_of("spectrum").messages_out
            << " chunks through the spectrum\n";
}
