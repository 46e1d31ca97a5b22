// GPU reduction kernels against a host reference, one test per (type, op) pair of the lists,
// on sizes that take the 16-byte packed path, the element path and both (a misaligned start).
// Without a CUDA device every test is skipped with the reason.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/op_gpu.h"

namespace {

using weft::BasicType;
using weft::ReduceOp;

const std::vector<BasicType> kTypes = {BasicType::i8, BasicType::u8, BasicType::i16, BasicType::u16,
                                       BasicType::i32, BasicType::u32, BasicType::i64, BasicType::u64,
                                       BasicType::f16, BasicType::bf16, BasicType::f32, BasicType::f64};
const std::vector<ReduceOp> kOps = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                    ReduceOp::band, ReduceOp::bor, ReduceOp::bxor, ReduceOp::land,
                                    ReduceOp::lor, ReduceOp::lxor};

bool is_float(BasicType t) { return t == BasicType::f16 || t == BasicType::bf16 || t == BasicType::f32 || t == BasicType::f64; }
bool is_signed(BasicType t) {
  return t == BasicType::i8 || t == BasicType::i16 || t == BasicType::i32 || t == BasicType::i64 || is_float(t);
}

// Element i of a buffer of type t, as a double (exact for the small values used), and back.
double get(BasicType t, const char* p, size_t i) {
  switch (t) {
    case BasicType::i8: return reinterpret_cast<const int8_t*>(p)[i];
    case BasicType::u8: return reinterpret_cast<const uint8_t*>(p)[i];
    case BasicType::i16: return reinterpret_cast<const int16_t*>(p)[i];
    case BasicType::u16: return reinterpret_cast<const uint16_t*>(p)[i];
    case BasicType::i32: return reinterpret_cast<const int32_t*>(p)[i];
    case BasicType::u32: return reinterpret_cast<const uint32_t*>(p)[i];
    case BasicType::i64: return double(reinterpret_cast<const int64_t*>(p)[i]);
    case BasicType::u64: return double(reinterpret_cast<const uint64_t*>(p)[i]);
    case BasicType::f16: return __half2float(reinterpret_cast<const __half*>(p)[i]);
    case BasicType::bf16: return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
    case BasicType::f32: return reinterpret_cast<const float*>(p)[i];
    case BasicType::f64: return reinterpret_cast<const double*>(p)[i];
    default: return 0;
  }
}

void put(BasicType t, char* p, size_t i, double v) {
  switch (t) {
    case BasicType::i8: reinterpret_cast<int8_t*>(p)[i] = int8_t(v); break;
    case BasicType::u8: reinterpret_cast<uint8_t*>(p)[i] = uint8_t(v); break;
    case BasicType::i16: reinterpret_cast<int16_t*>(p)[i] = int16_t(v); break;
    case BasicType::u16: reinterpret_cast<uint16_t*>(p)[i] = uint16_t(v); break;
    case BasicType::i32: reinterpret_cast<int32_t*>(p)[i] = int32_t(v); break;
    case BasicType::u32: reinterpret_cast<uint32_t*>(p)[i] = uint32_t(v); break;
    case BasicType::i64: reinterpret_cast<int64_t*>(p)[i] = int64_t(v); break;
    case BasicType::u64: reinterpret_cast<uint64_t*>(p)[i] = uint64_t(v); break;
    case BasicType::f16: reinterpret_cast<__half*>(p)[i] = __float2half_rn(float(v)); break;
    case BasicType::bf16: reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(float(v)); break;
    case BasicType::f32: reinterpret_cast<float*>(p)[i] = float(v); break;
    case BasicType::f64: reinterpret_cast<double*>(p)[i] = v; break;
    default: break;
  }
}

double reference(ReduceOp op, double a, double b) {
  const auto ia = int64_t(a), ib = int64_t(b);
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::min: return b < a ? b : a;
    case ReduceOp::max: return b > a ? b : a;
    case ReduceOp::band: return double(ia & ib);
    case ReduceOp::bor: return double(ia | ib);
    case ReduceOp::bxor: return double(ia ^ ib);
    case ReduceOp::land: return double(ia && ib);
    case ReduceOp::lor: return double(ia || ib);
    case ReduceOp::lxor: return double(!ia != !ib);
    default: return 0;
  }
}

std::string why_no_device() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  return n == 0 ? "no CUDA device" : "";
}

class ReduceGpu : public ::testing::TestWithParam<std::tuple<BasicType, ReduceOp>> {};

TEST_P(ReduceGpu, MatchesHostReference) {
  const auto [type, op] = GetParam();
  if (!weft::reduce_device_supports(op, type)) {
    EXPECT_EQ(weft::reduce_device(op, type, nullptr, nullptr, 4, nullptr), weft::Status::invalid_op);
    GTEST_SKIP() << weft::reduce_op_name(op) << " is not defined on " << weft::basic_type_name(type);
  }
  if (const std::string why = why_no_device(); !why.empty()) GTEST_SKIP() << why;
  const size_t es = weft::basic_type_size(type);
  std::mt19937 rng(42);
  // Small values: products of two stay exact in every type, and sums cannot overflow.
  std::uniform_int_distribution<int> value(is_signed(type) ? -4 : 0, 4);
  for (size_t count : {size_t(1), size_t(7), size_t(1000), size_t(100003)}) {
    for (size_t shift : {size_t(0), size_t(1)}) {  // 1: a start off the 16-byte packs
      std::vector<char> in((count + shift) * es), inout((count + shift) * es), want((count + shift) * es);
      for (size_t i = 0; i < count + shift; ++i) {
        put(type, in.data(), i, value(rng));
        put(type, inout.data(), i, value(rng));
        put(type, want.data(), i, reference(op, get(type, in.data(), i), get(type, inout.data(), i)));
      }
      char *d_in = nullptr, *d_inout = nullptr;
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_in), in.size()), cudaSuccess);
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d_inout), inout.size()), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_in, in.data(), in.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_inout, inout.data(), inout.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(weft::reduce_device(op, type, d_in + shift * es, d_inout + shift * es, count, nullptr), weft::Status::ok);
      std::vector<char> got(inout.size());
      ASSERT_EQ(cudaMemcpy(got.data(), d_inout, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      cudaFree(d_in);
      cudaFree(d_inout);
      for (size_t i = 0; i < shift; ++i)  // before the range: untouched
        ASSERT_EQ(get(type, got.data(), i), get(type, inout.data(), i)) << "element " << i << " was written";
      for (size_t i = shift; i < count + shift; ++i)
        ASSERT_EQ(get(type, got.data(), i), get(type, want.data(), i))
            << "count " << count << ", shift " << shift << ", element " << i - shift;
    }
  }
}

std::string pair_name(const ::testing::TestParamInfo<std::tuple<BasicType, ReduceOp>>& info) {
  return std::string(weft::basic_type_name(std::get<0>(info.param))) + "_" + weft::reduce_op_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Pairs, ReduceGpu, ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::ValuesIn(kOps)),
                         [](const auto& info) {
                           std::string n = pair_name(info);
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
