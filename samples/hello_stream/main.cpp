// hello_stream: EXLA's stream example in C++. A running sum: each chunk's
// output is the sum of the chunks before it, and the accumulator carries the
// sum from chunk to chunk; done() returns its final value.
//
//   1, 2, 3, 4, 5 ──> sum(x, acc) = {acc, x + acc} ──> 0, 1, 3, 6, 10
//                          acc: 0 -> 1 -> 3 -> 6 -> 10 -> 15
//
// (EXLA's documentation prints 0, 1, 2, 3, 4 and 5 for this stream; the
// function it shows gives the sums above.)

#include <iostream>

#include <sluice/devices/backend.h>
#include <sluice/stream/stream.h>

int main() {
  // {output, new accumulator}: the sum so far goes out, the chunk is added to it.
  auto sum = [](sluice::Expr x, sluice::Expr acc) { return sluice::tuple(acc, x + acc); };
  sluice::Stream stream = sluice::stream(sum, {sluice::s64({})}, {sluice::scalar<int64_t>(0)});

  for (int64_t i = 1; i <= 5; ++i) {
    stream.send(sluice::scalar(i));  // returns at once: the chunk computes in the background
    std::cout << "chunk " << stream.recv()[0].to_vector<int64_t>()[0] << "\n";
  }
  std::cout << "result " << stream.done()[0].to_vector<int64_t>()[0] << "\n";
}
