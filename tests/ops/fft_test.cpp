// fft and ifft: complex types, and the pad or slice a length adds.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

TEST(Fft, RealInputsBecomeComplex) {
  const Expr f = fft(arg(f32({8})));
  EXPECT_EQ(f.spec(), c64({8}));
  EXPECT_EQ(f.node()->op, Op::Fft);
  EXPECT_EQ(f.node()->attrs.index, 8) << "the transform length";
  EXPECT_EQ(f.node()->operands.at(0)->op, Op::AsType);
  EXPECT_EQ(fft(arg(f64({4, 16}))).spec(), c128({4, 16}));
  EXPECT_EQ(fft(arg(s32({8}))).spec(), c64({8}));
  EXPECT_EQ(ifft(arg(c128({2, 8}))).spec(), c128({2, 8}));
  EXPECT_EQ(ifft(arg(c64({8}))).node()->operands.at(0)->op, Op::Parameter);
}

TEST(Fft, LengthPadsWithZerosOrTruncates) {
  const Expr padded = fft(arg(f32({3, 6})), 8);
  EXPECT_EQ(padded.spec(), c64({3, 8}));
  const Node& p = *padded.node()->operands.at(0);
  EXPECT_EQ(p.op, Op::Pad);
  EXPECT_EQ(p.attrs.padding, (std::vector<PadDim>{{0, 0, 0}, {0, 2, 0}}));
  EXPECT_EQ(p.operands.at(1)->spec, c64()) << "padding value is a complex zero";
  const Expr cut = ifft(arg(c64({10})), 4);
  EXPECT_EQ(cut.spec(), c64({4}));
  EXPECT_EQ(cut.node()->operands.at(0)->op, Op::Slice);
  EXPECT_EQ(cut.node()->attrs.index, 4);
}

TEST(Fft, Errors) {
  EXPECT_THROW_WITH(fft(arg(f32({}))), ShapeError, "fft", "rank >= 1");
  EXPECT_THROW_WITH(ifft(arg(c64({4})), 0), ShapeError, "ifft", "length", ">= 1", "0");
  EXPECT_THROW_WITH(fft(arg(f32({0}))), ShapeError, "fft", "length");
}

}  // namespace
}  // namespace sluice
