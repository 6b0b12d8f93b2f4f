#pragma once
// Runs one test of this test program in a process of its own: for what is
// process-wide (FFTW's wisdom, a GPU's memory opened from another process).

#include <string>
#include <vector>

namespace sluice::testing {

// Runs this program again with only `test` (a gtest filter), `env`
// (NAME=value) ahead of this process's environment, and its output to
// `log`; returns its exit status (-1: it could not start; 128 + N: killed
// by signal N).
int run_in_child(const std::string& test, std::vector<std::string> env, const std::string& log);

}  // namespace sluice::testing
