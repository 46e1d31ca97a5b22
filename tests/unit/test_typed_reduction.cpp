// Reductions over datatype elements (runtime/typed_reduction): which loop fits which datatype,
// and MPI_Reduce_local's work on contiguous and strided layouts, gaps untouched.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/type_constructors.h"
#include "runtime/typed_reduction.h"
#include "runtime/typemap.h"

namespace weft {
namespace {

struct Predefined {
  Datatype d;
  Predefined(const char* name, BasicType basic, size_t size) { init_predefined(d, name, basic, size, size); }
};

const Predefined kDouble("MPI_DOUBLE", BasicType::f64, 8);
const Predefined kInt("MPI_INT", BasicType::i32, 4);

TEST(TypedReduction, PredefinedTypeReducesInPlaceOnItsBasicType) {
  Reduction red;
  ReductionLayout lay = reduction_layout(&kDouble.d, 4);
  ASSERT_EQ(fit_reduction(ReduceOp::sum, &red, &lay), ReductionFit::ok);
  EXPECT_TRUE(lay.contiguous);
  EXPECT_EQ(lay.offset, 0);
  EXPECT_EQ(lay.reduce_count, 4u);
  EXPECT_EQ(red.type, BasicType::f64);
  EXPECT_EQ(red.elem_size, 8u);
  std::vector<double> in{1, 2, 3, 4}, inout{10, 20, 30, 40};
  ASSERT_EQ(reduce_typed(red, lay, in.data(), inout.data()), Status::ok);
  EXPECT_EQ(inout, (std::vector<double>{11, 22, 33, 44}));
}

TEST(TypedReduction, StridedTypeReducesOnItsPackedFormAndLeavesTheGaps) {
  // Three blocks of two doubles, a stride of three: every third double is a gap.
  Datatype* vec = make_vector(3, 2, 3, &kDouble.d);
  Reduction red;
  ReductionLayout lay = reduction_layout(vec, 2);
  ASSERT_EQ(fit_reduction(ReduceOp::max, &red, &lay), ReductionFit::ok);
  EXPECT_FALSE(lay.contiguous);
  EXPECT_EQ(lay.reduce_count, 12u);  // basic elements of two vectors
  EXPECT_EQ(red.elem_size, 8u);
  const size_t n = size_t(vec->extent / 8) * 2;  // the doubles two elements span
  std::vector<double> in(n), inout(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = double(i % 2 ? 100 + i : i);
    inout[i] = double(i % 2 ? i : 100 + i);
  }
  std::vector<double> expect = inout;
  for (size_t e = 0; e < 2; ++e)
    for (size_t b = 0; b < 3; ++b)
      for (size_t j = 0; j < 2; ++j) {
        const size_t i = e * size_t(vec->extent / 8) + b * 3 + j;
        expect[i] = 100 + double(i);
      }
  ASSERT_EQ(reduce_typed(red, lay, in.data(), inout.data()), Status::ok);
  EXPECT_EQ(inout, expect);
  type_release(vec);
}

TEST(TypedReduction, MixedOrUndefinedTypesAreRefused) {
  const int bl[2] = {1, 1};
  const ptrdiff_t disp[2] = {0, 8};
  const Datatype* types[2] = {&kDouble.d, &kInt.d};
  Datatype* mixed = make_struct(2, bl, disp, types);
  Reduction red;
  ReductionLayout lay = reduction_layout(mixed, 1);
  EXPECT_EQ(fit_reduction(ReduceOp::sum, &red, &lay), ReductionFit::mixed_type);
  lay = reduction_layout(mixed, 0);  // nothing to reduce: any type will do
  EXPECT_EQ(fit_reduction(ReduceOp::sum, &red, &lay), ReductionFit::ok);
  EXPECT_EQ(lay.reduce_count, 0u);
  lay = reduction_layout(&kDouble.d, 1);
  EXPECT_EQ(fit_reduction(ReduceOp::band, &red, &lay), ReductionFit::undefined);
  EXPECT_EQ(red.type, BasicType::f64);  // names the type refused
  type_release(mixed);
}

TEST(TypedReduction, UserFunctionRunsOnTheContiguousRun) {
  struct Calls {
    size_t count = 0;
  } calls;
  Reduction red;
  red.user = [](const void* ctx, const void* in, void* inout, size_t count) {
    const_cast<Calls*>(static_cast<const Calls*>(ctx))->count += count;
    for (size_t i = 0; i < count; ++i) static_cast<int*>(inout)[i] -= static_cast<const int*>(in)[i];
    return Status::ok;
  };
  red.user_ctx = &calls;
  ReductionLayout lay = reduction_layout(&kInt.d, 3);
  lay.reduce_count = 3;
  std::vector<int> in{1, 2, 3}, inout{10, 10, 10};
  ASSERT_EQ(reduce_typed(red, lay, in.data(), inout.data()), Status::ok);
  EXPECT_EQ(inout, (std::vector<int>{9, 8, 7}));
  EXPECT_EQ(calls.count, 3u);
}

}  // namespace
}  // namespace weft
