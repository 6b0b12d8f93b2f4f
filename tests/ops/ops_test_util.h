#pragma once
// Helpers shared by the ops tests.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <sluice/ops/ops.h>

namespace sluice::testing {

// Expects `stmt` to throw `Type` whose message contains every one of `parts`
// (the op's name, the argument, what was found).
#define EXPECT_THROW_WITH(stmt, Type, ...)                                            \
  do {                                                                                \
    try {                                                                             \
      stmt;                                                                           \
      ADD_FAILURE() << #stmt " did not throw " #Type;                                 \
    } catch (const Type& e) {                                                         \
      for (const std::string& part : std::vector<std::string>{__VA_ARGS__}) {         \
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)                \
            << #stmt ": message \"" << e.what() << "\" lacks \"" << part << "\"";     \
      }                                                                               \
    } catch (const std::exception& e) {                                               \
      ADD_FAILURE() << #stmt " threw another exception than " #Type ": " << e.what(); \
    }                                                                                 \
  } while (0)

// A parameter of the given spec, as a traced function's argument would be.
inline Expr arg(const Spec& spec, int64_t index = 0) { return parameter(index, spec); }

// Plain numbers where a builder takes an Expr (operators make these themselves).
inline Expr weak(int v) { return weak_scalar(int64_t{v}); }
inline Expr weak(double v) { return weak_scalar(v); }

}  // namespace sluice::testing
