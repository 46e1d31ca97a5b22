// reduce_local throughput against a per-element switch loop (the pre-vectorisation shape).
// Bytes per second count one operand: n elements of the type, as a message of that size.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/datatype.h"
#include "runtime/op.h"

using namespace weft;

namespace {

template <class T, bool = std::is_integral_v<T>> struct WrapOf { using type = T; };
template <class T> struct WrapOf<T, true> {
  using type = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
};
template <class T> using Wrap = typename WrapOf<T>::type;

// noipa: keeps op a run-time value, so the compiler cannot specialise the loop per op.
template <class T>
[[gnu::noipa]] void scalar_reference(ReduceOp op, const void* in, void* inout, size_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (size_t i = 0; i < n; ++i) {
    T x = a[i], y = b[i];
    switch (op) {
      case ReduceOp::sum: y = T(Wrap<T>(x) + Wrap<T>(y)); break;
      case ReduceOp::prod: y = T(Wrap<T>(x) * Wrap<T>(y)); break;
      case ReduceOp::max: y = x > y ? x : y; break;
      case ReduceOp::min: y = x < y ? x : y; break;
      default:
        if constexpr (std::is_integral_v<T>) {
          switch (op) {
            case ReduceOp::band: y = T(x & y); break;
            case ReduceOp::bor: y = T(x | y); break;
            case ReduceOp::bxor: y = T(x ^ y); break;
            case ReduceOp::land: y = T(x && y); break;
            case ReduceOp::lor: y = T(x || y); break;
            case ReduceOp::lxor: y = T(!x != !y); break;
            default: break;
          }
        }
        break;
    }
    b[i] = y;
  }
}

// Both operands 64-byte aligned, 1 KiB apart modulo 4 KiB: two separate allocations can land
// on the same page offset, and then loads falsely wait on stores (4K aliasing) in every variant.
struct Buffers {
  explicit Buffers(size_t bytes) {
    const size_t span = (bytes + 4095) / 4096 * 4096;
    base = std::aligned_alloc(4096, 2 * span + 4096);
    in = base;
    inout = static_cast<char*>(base) + span + 1024;
  }
  ~Buffers() { std::free(base); }
  void* base;
  void* in;
  void* inout;
};

// Small values keep sums finite and away from denormals over many iterations.
template <class T>
void fill(void* p, size_t n, unsigned seed) {
  T* t = static_cast<T*>(p);
  for (size_t i = 0; i < n; ++i) t[i] = T((i * 7 + seed) % 5);
}

template <class T>
void run(benchmark::State& state, ReduceOp op, BasicType type, bool reference) {
  const size_t bytes = size_t(state.range(0));
  const size_t n = bytes / sizeof(T);
  Buffers buf(bytes);
  fill<T>(buf.in, n, 1);
  fill<T>(buf.inout, n, 3);
  for (auto _ : state) {
    if (reference) {
      scalar_reference<T>(op, buf.in, buf.inout, n);
    } else if (reduce_local(op, type, buf.in, buf.inout, n) != Status::ok) {
      state.SkipWithError("reduce_local failed");
      break;
    }
    benchmark::DoNotOptimize(buf.inout);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n * sizeof(T)));
}

template <class T>
void add(ReduceOp op, BasicType type) {
  for (bool reference : {false, true}) {
    std::string name = std::string(reference ? "scalar_reference" : "reduce_local") + "/" +
                       reduce_op_name(op) + "/" + basic_type_name(type);
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
      run<T>(s, op, type, reference);
    })->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);
  }
}

}  // namespace

int main(int argc, char** argv) {
  add<float>(ReduceOp::sum, BasicType::f32);
  add<double>(ReduceOp::sum, BasicType::f64);
  add<int32_t>(ReduceOp::sum, BasicType::i32);
  add<int64_t>(ReduceOp::sum, BasicType::i64);
  add<float>(ReduceOp::max, BasicType::f32);
  add<uint8_t>(ReduceOp::bxor, BasicType::u8);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
