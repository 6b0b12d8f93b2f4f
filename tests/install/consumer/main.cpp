// Uses the installed headers and libraries only, through the umbrella header.

#include <sluice/sluice.h>

#include <iostream>
#include <vector>

int main() {
  sluice::Function f = sluice::trace({sluice::f32({3})}, [](sluice::Expr x) { return x * 2 + 1; });
  sluice::Executable exe = sluice::compile(f);
  std::vector<float> y = exe.run({sluice::tensor<float>({1, 2, 3})})[0].to_vector<float>();
  std::cout << "consumer: x * 2 + 1 =";
  for (float v : y) std::cout << " " << v;
  std::cout << "\n";
}
