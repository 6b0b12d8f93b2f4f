#pragma once
// FFTW wisdom kept in a file, once per machine, so that a plan measured in
// one process is imported by the next instead of measured again (fft.cpp).
//
// SLUICE_FFT_WISDOM names the file (default $XDG_CACHE_HOME/sluice/fftw-wisdom
// or ~/.cache/sluice/fftw-wisdom; "off": no file). It holds each precision's
// wisdom as FFTW exports it, one after the other ("(fftw-3.3.10 fftw_wisdom
// ...)" then "(fftw-3.3.10 fftwf_wisdom ...)"): FFTW keeps wisdom per
// precision library. A file that cannot be read or parsed, or a location
// that cannot be written, is one warning and never an error: plans are then
// measured, as without a file.

#include <cstdint>
#include <initializer_list>
#include <string>

namespace sluice::cpu {

// What this process did with the wisdom file; for tests and debugging.
struct FftWisdomStatus {
  std::string path;               // the file; empty with SLUICE_FFT_WISDOM=off
  int64_t imported = 0;           // precisions whose wisdom was read from the file
  int64_t plans_from_wisdom = 0;  // measured-mode plans that wisdom already had
  int64_t plans_measured = 0;     // measured-mode plans that FFTW had to time
  int64_t exported = 0;           // times this process wrote the file
  int64_t warnings = 0;           // at most one for reading and one for writing
};
FftWisdomStatus fft_wisdom_status();

// One precision's wisdom calls (fftw_* or fftwf_*).
struct FftwWisdomApi {
  const char* name;  // the word after the version in its exported wisdom: "fftw_wisdom"
  bool (*import_text)(const char* text);
  std::string (*export_text)();
};

// Called by the planner under its precision's lock: FFTW's wisdom calls are
// no more thread-safe than its planner.
// Reads the file's wisdom for `api` (the first time for each precision).
void fft_wisdom_import(const FftwWisdomApi& api);
// Counts a measured-mode plan, found in wisdom or measured.
void fft_wisdom_count(bool from_wisdom);
// Merges `api`'s wisdom into the file, after a plan was measured.
void fft_wisdom_export(const FftwWisdomApi& api);
// Imports `text` (wisdom as the file holds it: fft_plans() of another
// process) for each of `apis`, and makes it the only wisdom: from now on
// this process neither reads nor writes the file. ConfigError naming what
// is wrong when `text` is not wisdom or FFTW refuses it. Under the
// planners' locks.
void fft_wisdom_pin(const std::string& text, std::initializer_list<const FftwWisdomApi*> apis);

// The plans a checkpoint stores (Backend::plans, fft.cpp): each
// precision's wisdom as the file holds it; empty while no plan was
// measured (estimated plans are the same in every process). Thread-safe.
std::string fft_plans();
// Takes the plans of fft_plans(): fft_wisdom_pin under the planners' locks.
// Plans this process made before stay as they are.
void use_fft_plans(const std::string& text);

}  // namespace sluice::cpu
