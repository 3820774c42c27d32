//===- SymbolicTest.cpp - Symbolic integer expressions ---------------------===//
#include "turbine/kernels/Symbolic.h"

#include <gtest/gtest.h>

using namespace turbine::kernels;

TEST(Symbolic, FoldsConstantsAndIdentities) {
  Symbol N("N");
  EXPECT_EQ((N * 1 + 0).str(), "N");
  EXPECT_TRUE((Expr(3) * 4 + 2).isConstant());
  EXPECT_EQ((Expr(3) * 4 + 2).constant(), 14);
  EXPECT_EQ((N * 0).str(), "0");
  EXPECT_EQ((N - N).str(), "0");
  EXPECT_EQ(((N + 2) + 3).str(), "N + 5");
  EXPECT_EQ(floordiv(N, 1).str(), "N");
  EXPECT_EQ(min(N, N).str(), "N");
}

TEST(Symbolic, PrintsReadably) {
  Symbol K("K"), B("BLOCK_K");
  EXPECT_EQ(ceildiv(K, B).str(), "ceildiv(K, BLOCK_K)");
  EXPECT_EQ((Expr::programId(0) * B + 1).str(), "pid0 * BLOCK_K + 1");
  EXPECT_EQ(((K + 1) * B).str(), "(K + 1) * BLOCK_K");
  EXPECT_EQ((K - (B - 1)).str(), "K - (BLOCK_K - 1)");
  EXPECT_EQ(max(K, Expr::loopIndex(2)).str(), "max(K, k2)");
}

TEST(Symbolic, EvaluatesWithFloorAndCeilSemantics) {
  Symbol A("A"), B("B");
  Bindings b = {{"A", -7}, {"B", 2}};
  EXPECT_EQ(*evaluate(floordiv(A, B), b), -4);
  EXPECT_EQ(*evaluate(ceildiv(A, B), b), -3);
  EXPECT_EQ(*evaluate(A % B, b), 1);
  EXPECT_EQ(*evaluate(min(A, B) * max(A, B), b), -14);
  EXPECT_EQ(*evaluate(ceildiv(Expr(130), Expr(64)), Bindings{}), 3);
}

TEST(Symbolic, ReportsUnboundSymbolAndDivisionByZero) {
  Symbol A("A"), B("B");
  Result<int64_t> r = evaluate(A + B, Bindings{{"A", 1}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "unbound symbol 'B'");
  Result<int64_t> z = evaluate(floordiv(A, B), Bindings{{"A", 1}, {"B", 0}});
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.message().find("division by zero"), std::string::npos);
  Result<int64_t> pid = evaluate(Expr::loopIndex(0) + 1, Bindings{});
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.message().find("outside its for_loop"), std::string::npos);
}

TEST(Symbolic, StructuralEquality) {
  Symbol M("M"), N("N");
  EXPECT_TRUE((M * N + 1).same(Symbol("M") * Symbol("N") + 1));
  EXPECT_FALSE((M * N).same(N * M)); // no commutative normalization
  EXPECT_TRUE(Expr::programId(1).dependsOnRunTime());
  EXPECT_FALSE((M + 1).dependsOnRunTime());
}
