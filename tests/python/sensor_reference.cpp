// sensor_reference CHUNKS DIR: the sensor monitor's vibration source and its
// two C++ stages (samples/sensor_monitor/stages.cpp) over CHUNKS chunks, run
// as streams; writes what went in and what came out as DIR/signals.npy
// (f32[chunks][W][C][N]), labels.npy, features.npy (f32[chunks][W][C * B])
// and scores.npy (f32[chunks][W]), for tests/python to run
// samples/sensor_monitor/stages.py on the same signals and compare.

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <sensor_monitor/sensor_monitor.h>
#include <sluice/io/npy.h>
#include <sluice/stream/stream.h>

using namespace sluice;
using namespace sluice::sensor_monitor;

namespace {

// The chunks' tensors one after the other, as one tensor with a leading chunk axis.
Tensor stacked(const std::vector<Tensor>& chunks) {
  std::vector<int64_t> dims = chunks.at(0).shape().dims();
  dims.insert(dims.begin(), static_cast<int64_t>(chunks.size()));
  std::vector<float> all;
  for (const Tensor& t : chunks) {
    const std::vector<float> v = t.to_vector<float>();
    all.insert(all.end(), v.begin(), v.end());
  }
  return tensor(all, Shape(dims));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: sensor_reference CHUNKS DIR\n";
    return 2;
  }
  Config c;
  c.chunks = std::atoll(argv[1]);
  const std::string dir = argv[2];
  c.device = host();
  std::shared_ptr<Source> source = vibration(c);
  Stream spectrum = stream(spectrum_function(c), signal_spec(c), spectrum_acc(c));
  Stream detector = stream(detector_function(c), feature_spec(c), detector_acc(c));
  std::vector<Tensor> signals, labels, features, scores;
  while (std::optional<Tensors> chunk = source->next()) {
    signals.push_back((*chunk)[0]);
    labels.push_back((*chunk)[1]);
    spectrum.send(*chunk);
    const Tensors f = spectrum.recv();
    features.push_back(f[0]);
    detector.send(f);
    scores.push_back(detector.recv()[0]);
  }
  spectrum.done();
  detector.done();
  npy::save(dir + "/signals.npy", stacked(signals));
  npy::save(dir + "/labels.npy", stacked(labels));
  npy::save(dir + "/features.npy", stacked(features));
  npy::save(dir + "/scores.npy", stacked(scores));
  std::cout << scores.size() << " chunks\n";
  return 0;
}
