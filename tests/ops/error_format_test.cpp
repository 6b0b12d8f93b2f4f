// The one formatter of sluice's messages: every combination of where, what,
// expected and found present.
#include <sluice/ops/detail/error_format.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace sluice {
namespace {

TEST(ErrorMessage, AllFourParts) {
  EXPECT_EQ(error_message("call", "argument 2", "f32[3]", "f32[4]"),
            "call: argument 2: expected f32[3], found f32[4]");
}

TEST(ErrorMessage, EachCombinationOfPartsPresent) {
  // where what expected found, a bit each: empty parts are left out with their separators.
  const char* const expected[16] = {
      "",                                  // none
      "found F",                           // found
      "expected E",                        // expected
      "expected E, found F",               // expected found
      "what",                              // what
      "what: found F",                     // what found
      "what: expected E",                  // what expected
      "what: expected E, found F",         // what expected found
      "where",                             // where
      "where: found F",                    // where found
      "where: expected E",                 // where expected
      "where: expected E, found F",        // where expected found
      "where: what",                       // where what
      "where: what: found F",              // where what found
      "where: what: expected E",           // where what expected
      "where: what: expected E, found F",  // all
  };
  for (int bits = 0; bits < 16; ++bits) {
    const std::string_view where = bits & 8 ? "where" : "";
    const std::string_view what = bits & 4 ? "what" : "";
    const std::string_view exp = bits & 2 ? "E" : "";
    const std::string_view found = bits & 1 ? "F" : "";
    EXPECT_EQ(error_message(where, what, exp, found), expected[bits]) << "bits " << bits;
  }
}

TEST(ErrorMessage, WhereMayItselfNameSeveralPlaces) {
  EXPECT_EQ(error_message("sink zmq tcp://*:5555: seq 7", "tensor 1", "f32[2]", "f32[3]"),
            "sink zmq tcp://*:5555: seq 7: tensor 1: expected f32[2], found f32[3]");
}

TEST(ErrorMessage, FormatsNumbersAndSpecsThroughFmt) {
  EXPECT_EQ(error_message("call", "", fmt::format("{} arguments", 3), size_t{2}),
            "call: expected 3 arguments, found 2");
  EXPECT_EQ(error_message("to_batched", "batch_size", "at least 1", int64_t{-4}),
            "to_batched: batch_size: expected at least 1, found -4");
  EXPECT_EQ(error_message("call", "argument 0", f32({2, 3}), s32({})),
            "call: argument 0: expected f32[2][3], found s32");
  EXPECT_EQ(error_message("run", "argument 1", DType::F16, std::string("bf16")),
            "run: argument 1: expected f16, found bf16");
  EXPECT_EQ(fmt::format("{} {}", Shape{4, 5}, Shape{}), "[4][5] ");
}

TEST(ErrorMessage, ANumberZeroIsPresent) {
  // Only empty text is left out: a found 0 is a finding.
  EXPECT_EQ(error_message("send", "credit", "at least 1", 0), "send: credit: expected at least 1, found 0");
}

TEST(ErrorMessage, TypedErrorsCarryIt) {
  try {
    throw ShapeError(error_message("reshape", "shape", "6 elements", "4"));
  } catch (const Error& e) { EXPECT_STREQ(e.what(), "reshape: shape: expected 6 elements, found 4"); }
}

}  // namespace
}  // namespace sluice
