// FFTW wisdom in a file (devices/cpu/kernels/fft_wisdom.h), across
// processes: each test runs this binary again, filtered to
// FftWisdomChild.Transform, with SLUICE_FFT_WISDOM and friends set, and reads
// back the counters the child reports (fft_wisdom_status) and its log.
// Wisdom is per process, so a process of its own is the only clean slate.

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/cpu/kernels/fft_wisdom.h>
#include <sluice/ops/ops.h>
#include "tests/devices/fft_reference.h"
#include "tests/devices/run_in_child.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

constexpr const char* kReportVariable = "SLUICE_FFT_WISDOM_TEST_REPORT";
constexpr int64_t kRows = 16, kLength = 1000;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The bytes of `v`, hashed (FNV-1a): equal digests, equal results bit for bit.
template <typename C>
std::string digest(const std::vector<C>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(C); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return std::to_string(h);
}

template <typename C>
std::vector<C> forward(const std::vector<C>& x, const Shape& s) {
  const Executable e = compile(trace({{dtype_of<C>(), s}}, [](Expr v) { return fft(v); }));
  const std::span<const C> y = e.run({tensor(x, s)})[0].template data<C>();
  return {y.begin(), y.end()};
}

// The child: four measured-mode plans (c64 and c128, 2 rows of 8 and 16
// rows of 1000), checked against numpy and a naive DFT; then it writes
// fft_wisdom_status() and the time the first runs (the planning) took.
// With SLUICE_FFT_PLANS_TEST_USE it first takes the plans in that file (a
// restore's Client::use_plans); with SLUICE_FFT_PLANS_TEST_SAVE it writes
// its plans there (what a checkpoint stores) once it has transformed.
TEST(FftWisdomChild, Transform) {
  const char* report = std::getenv(kReportVariable);
  if (report == nullptr) GTEST_SKIP() << "a process of its own for the FftWisdom tests, which run it";
  if (const char* use = std::getenv("SLUICE_FFT_PLANS_TEST_USE")) client("host").use_plans(read_text(use));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<complex128> small = test::signal(16), large = test::signal(kRows * kLength);
  const std::vector<complex128> y128 = forward(small, {2, 8});
  const std::vector<complex64> y64 = forward(test::signal<complex64>(16), {2, 8});
  const std::vector<complex128> z128 = forward(large, {kRows, kLength});
  const std::vector<complex64> z64 =
      forward(std::vector<complex64>(large.begin(), large.end()), {kRows, kLength});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const double scale = test::max_abs(test::kFft2x8);
  EXPECT_LT(test::max_error(y128, test::kFft2x8), 1e-12 * scale) << "c128 [2, 8]";
  EXPECT_LT(test::max_error(y64, test::kFft2x8), 1e-5 * scale) << "c64 [2, 8]";
  for (int64_t r : {int64_t{0}, int64_t{7}, kRows - 1}) {
    const std::vector<complex128> want = test::naive_dft(large.data() + r * kLength, kLength);
    const auto row = [&](const auto& z) {
      return std::vector(z.begin() + r * kLength, z.begin() + (r + 1) * kLength);
    };
    EXPECT_LT(test::max_error(row(z128), want), 1e-12 * test::max_abs(want)) << "c128 row " << r;
    EXPECT_LT(test::max_error(row(z64), want), 1e-5 * test::max_abs(want)) << "c64 row " << r;
  }

  if (const char* save = std::getenv("SLUICE_FFT_PLANS_TEST_SAVE")) std::ofstream(save) << client("host").plans();
  const cpu::FftWisdomStatus s = cpu::fft_wisdom_status();
  std::ofstream(report) << "path " << (s.path.empty() ? "-" : s.path) << "\nimported " << s.imported
                        << "\nplans_from_wisdom " << s.plans_from_wisdom << "\nplans_measured "
                        << s.plans_measured << "\nexported " << s.exported << "\nwarnings " << s.warnings
                        << "\nms " << ms << "\ndigest " << digest(z128) << "-" << digest(z64) << "\n";
}

class FftWisdom : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sluice-fft-wisdom-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  struct Result {
    std::map<std::string, std::string> report;
    std::string log;
    int64_t count(const std::string& key) const {
      auto it = report.find(key);
      return it == report.end() ? -1 : std::stoll(it->second);
    }
  };

  // Runs the child with `env` (NAME=value, ahead of this process's own) and
  // returns what it reported; a failure inside it fails the test.
  Result child(std::vector<std::string> env) {
    const std::string name = "child" + std::to_string(++children_);
    const std::string report = (dir_ / (name + ".report")).string(), log = (dir_ / (name + ".log")).string();
    env.push_back(std::string(kReportVariable) + "=" + report);
    env.push_back("SLUICE_LOG=warn");
    const int status = testing::run_in_child("FftWisdomChild.Transform", std::move(env), log);
    Result r;
    if (status == -1) {
      ADD_FAILURE() << "cannot start this program again";
      return r;
    }
    r.log = read(log);
    EXPECT_EQ(status, 0) << name << " failed; its output:\n" << r.log;
    std::istringstream lines(read(report));
    for (std::string key, value; lines >> key >> value;) r.report[key] = value;
    EXPECT_FALSE(r.report.empty()) << name << " reported nothing; its output:\n" << r.log;
    return r;
  }

  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  fs::path dir_;
  int children_ = 0;
};

constexpr int64_t kPlans = 4;

TEST_F(FftWisdom, MeasuredOnceThenImportedByTheNextProcess) {
  const fs::path file = dir_ / "cache" / "wisdom";  // its directory made on the first write
  const std::vector<std::string> env{"SLUICE_FFT_WISDOM=" + file.string(), "SLUICE_FFT_PLANS=measure"};
  const Result first = child(env);
  EXPECT_EQ(first.report.at("path"), file.string());
  EXPECT_EQ(first.count("imported"), 0) << "no file yet";
  EXPECT_EQ(first.count("plans_measured"), kPlans);
  EXPECT_EQ(first.count("plans_from_wisdom"), 0);
  EXPECT_EQ(first.count("exported"), kPlans) << "the file written after each measured plan";
  EXPECT_EQ(first.count("warnings"), 0) << first.log;
  const std::string written = read(file);
  EXPECT_TRUE(written.starts_with("(fftw-")) << written;
  EXPECT_NE(written.find(" fftw_wisdom "), std::string::npos) << "c128's wisdom";
  EXPECT_NE(written.find(" fftwf_wisdom "), std::string::npos) << "c64's wisdom";

  const Result second = child(env);
  EXPECT_EQ(second.count("imported"), 2) << "both precisions";
  EXPECT_EQ(second.count("plans_measured"), 0);
  EXPECT_EQ(second.count("plans_from_wisdom"), kPlans);
  EXPECT_EQ(second.count("exported"), 0) << "nothing new to keep";
  EXPECT_EQ(second.count("warnings"), 0) << second.log;
  EXPECT_EQ(read(file), written);
  const double measured_ms = std::stod(first.report.at("ms")),
               imported_ms = std::stod(second.report.at("ms"));
  EXPECT_LT(imported_ms, measured_ms) << "planning from wisdom is quicker than measuring";
  std::cout << "planning and first runs: " << measured_ms << " ms measured, " << imported_ms
            << " ms from the wisdom file\n";
}

TEST_F(FftWisdom, CorruptTornOrForeignFilesAreIgnoredWithOneWarning) {
  const fs::path file = dir_ / "wisdom";
  const std::vector<std::string> env{"SLUICE_FFT_WISDOM=" + file.string(), "SLUICE_FFT_PLANS=measure"};
  child(env);
  const std::string good = read(file);
  const std::vector<std::pair<std::string, std::string>> bad{
      {"not wisdom", "no wisdom at all\n"},
      {"torn", good.substr(0, good.size() / 2)},
      {"refused by FFTW",
       "(fftw-3.3.10 fftw_wisdom #x1 #x2 #x3 #x4\n  (no_such_solver 0 #x1 #x2 #x3 #x4 #x5 #x6 #x7)\n)\n"}};
  for (const auto& [what, text] : bad) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    const Result r = child(env);
    EXPECT_EQ(r.count("warnings"), 1) << what << "; output:\n" << r.log;
    EXPECT_NE(r.log.find("fft wisdom: " + file.string()), std::string::npos) << what << ": " << r.log;
    EXPECT_EQ(r.count("imported"), 0) << what;
    EXPECT_EQ(r.count("plans_measured"), kPlans) << what;
    EXPECT_TRUE(read(file).starts_with("(fftw-")) << what << ": the file rewritten with good wisdom";
  }
  const Result after = child(env);
  EXPECT_EQ(after.count("imported"), 2) << "the rewritten file";
  EXPECT_EQ(after.count("warnings"), 0) << after.log;
}

// What a checkpoint stores and a restore takes (Client::plans and
// use_plans): a process that takes another's plans measures none, neither
// reads nor writes the machine's wisdom file, and transforms bit for bit as
// the other did. Without them, exactness across a restore needed
// SLUICE_FFT_PLANS=estimate.
TEST_F(FftWisdom, PlansTakenFromAnotherProcessAreItsPlansExactly) {
  const fs::path plans = dir_ / "plans", file = dir_ / "wisdom";
  const Result first = child({"SLUICE_FFT_WISDOM=off", "SLUICE_FFT_PLANS=measure",
                              "SLUICE_FFT_PLANS_TEST_SAVE=" + plans.string()});
  EXPECT_EQ(first.count("plans_measured"), kPlans);
  ASSERT_TRUE(read(plans).starts_with("(fftw-")) << "no plans saved: " << read(plans);
  const Result restored = child({"SLUICE_FFT_WISDOM=" + file.string(), "SLUICE_FFT_PLANS=measure",
                                 "SLUICE_FFT_PLANS_TEST_USE=" + plans.string()});
  EXPECT_EQ(restored.count("plans_measured"), 0) << "a plan measured again: " << restored.log;
  EXPECT_EQ(restored.count("plans_from_wisdom"), kPlans);
  EXPECT_EQ(restored.count("imported"), 0) << "the machine's file was read";
  EXPECT_EQ(restored.count("exported"), 0) << "the machine's file was written";
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(restored.report.at("digest"), first.report.at("digest")) << "the transforms differ";

  EXPECT_THROW(client("host").use_plans("(not wisdom"), ConfigError) << "text that is not wisdom";
}

TEST_F(FftWisdom, OffWritesNothing) {
  const Result r = child({"SLUICE_FFT_WISDOM=off", "SLUICE_FFT_PLANS=measure",
                          "XDG_CACHE_HOME=" + dir_.string(), "HOME=" + dir_.string()});
  EXPECT_EQ(r.report.at("path"), "-");
  EXPECT_EQ(r.count("plans_measured"), kPlans);
  EXPECT_EQ(r.count("exported"), 0);
  EXPECT_EQ(r.count("warnings"), 0) << r.log;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
    EXPECT_TRUE(e.path().filename().string().starts_with("child")) << e.path() << " written";
  }
}

TEST_F(FftWisdom, EstimatedPlansLeaveTheFileAlone) {
  const Result r = child({"SLUICE_FFT_WISDOM=" + (dir_ / "wisdom").string(), "SLUICE_FFT_PLANS=estimate"});
  EXPECT_EQ(r.count("plans_measured") + r.count("plans_from_wisdom") + r.count("exported"), 0);
  EXPECT_FALSE(fs::exists(dir_ / "wisdom"));
}

TEST_F(FftWisdom, DefaultsToTheXdgCacheThenTheHomeCache) {
  const std::string xdg = (dir_ / "xdg").string(), home = (dir_ / "home").string();
  const Result by_xdg =
      child({"SLUICE_FFT_WISDOM=", "SLUICE_FFT_PLANS=measure", "XDG_CACHE_HOME=" + xdg, "HOME=" + home});
  EXPECT_EQ(by_xdg.report.at("path"), xdg + "/sluice/fftw-wisdom");
  EXPECT_TRUE(fs::exists(xdg + "/sluice/fftw-wisdom"));
  const Result by_home =
      child({"SLUICE_FFT_WISDOM=", "SLUICE_FFT_PLANS=measure", "XDG_CACHE_HOME=", "HOME=" + home});
  EXPECT_EQ(by_home.report.at("path"), home + "/.cache/sluice/fftw-wisdom");
  EXPECT_TRUE(fs::exists(home + "/.cache/sluice/fftw-wisdom"));
}

TEST_F(FftWisdom, AnUnwritableLocationWarnsOnce) {
  // Under a regular file: unwritable even for root.
  std::ofstream(dir_ / "file") << "a file, not a directory\n";
  const Result r =
      child({"SLUICE_FFT_WISDOM=" + (dir_ / "file" / "wisdom").string(), "SLUICE_FFT_PLANS=measure"});
  EXPECT_EQ(r.count("plans_measured"), kPlans);
  EXPECT_EQ(r.count("exported"), 0);
  EXPECT_EQ(r.count("warnings"), 1) << r.log;
  EXPECT_NE(r.log.find("not kept"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace sluice
