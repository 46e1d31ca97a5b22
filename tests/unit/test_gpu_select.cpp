// The selection of device-memory collectives: the GPU algorithms' estimates carry the rule
// (gpu::rule_pick), so the selector's argmin must pick what the hand-written rule picked
// before it became estimates, for every size, mode, threshold and rank count. The reference
// below is that rule, kept as it was; supports() is modelled from the algorithms' own (which
// need a GPU workspace): gpu_hier across nodes (blocking calls), the one-node forms on one
// node, the two-shot, ring and direct forms with flag kernels only, gpu_direct blocking only,
// gpu_reduce_scatter_block for equal shares only.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "coll/algorithm.h"
#include "coll/gpu/gpu_coll.h"
#include "coll/settings.h"
#include "runtime/config.h"

namespace {

using namespace weft;
using namespace weft::coll;
using gpu::RuleCall;
using gpu::Settings;

// The rule as coll/gpu/choice.cpp wrote it (gpu::choose and gpu::choose_allreduce), by name.
const char* reference_rule(const RuleCall& r, const Settings& s) {
  if (r.spans_nodes) return r.blocking ? "gpu_hier" : nullptr;  // gpu_hier supports blocking calls only
  switch (r.coll) {
    case Collective::allreduce:
      if (!r.kernels) return "gpu_copy_engine";
      if (s.direct_min && r.bytes >= s.direct_min && r.blocking) return "gpu_direct";
      if (s.direct_min && r.blocking) return "gpu_one_shot";  // below gpu_direct's size
      return r.bytes >= s.two_shot_min ? "gpu_two_shot" : "gpu_one_shot";
    case Collective::bcast: return "gpu_bcast";
    case Collective::reduce: return "gpu_reduce";
    case Collective::allgather: return "gpu_allgather";
    case Collective::reduce_scatter:
      if (r.block_form && r.kernels && r.blocking && s.reduce_scatter_direct_min && r.bytes >= s.reduce_scatter_direct_min)
        return "gpu_reduce_scatter_direct";
      return r.block_form ? "gpu_reduce_scatter_block" : "gpu_reduce_scatter";
    default: return nullptr;
  }
}

bool modelled_supports(const Algorithm& alg, const RuleCall& r) {
  const std::string name = alg.name;
  if (name == "gpu_hier") return r.spans_nodes && r.blocking;
  if (r.spans_nodes) return false;  // no workspace on a communicator spanning nodes
  const bool kernels_only = name.find("two_shot") != std::string::npos || name.find("ring") != std::string::npos ||
                            name == "gpu_one_shot" || name == "gpu_direct" || name == "gpu_reduce_scatter_direct";
  if (kernels_only && !r.kernels) return false;
  if (name == "gpu_direct") return r.blocking;
  if (name == "gpu_reduce_scatter_block") return r.block_form;
  if (name == "gpu_reduce_scatter_direct") return r.block_form && r.blocking;
  return true;
}

// The selector's argmin over coll/gpu's algorithms (coll/select.cpp), each estimate a modelled
// time (any value below a second, here one drawn from the grid point) plus the rule's penalty.
const Algorithm* argmin(const RuleCall& r, const Settings& s, unsigned seed) {
  const Algorithm* best = nullptr;
  double best_us = std::numeric_limits<double>::infinity();
  for (const Algorithm* alg : algorithms()) {
    if (alg->coll != r.coll || !gpu::is_gpu_algorithm(*alg) || !modelled_supports(*alg, r)) continue;
    seed = seed * 1103515245u + 12345u;
    const double us = double(seed % 1000000u) + gpu::rule_penalty_us(*alg, r, s);
    if (!best || us < best_us) {
      best = alg;
      best_us = us;
    }
  }
  return best;
}

TEST(GpuSelect, ArgminPicksWhatTheRulePicked) {
  const Collective colls[] = {Collective::allreduce, Collective::bcast, Collective::reduce, Collective::allgather,
                              Collective::reduce_scatter};
  const gpu::Mode modes[] = {gpu::Mode::automatic, gpu::Mode::kernels, gpu::Mode::copy_engine};
  const size_t two_shot_mins[] = {size_t(256) << 10, 4096, 0};
  const size_t direct_mins[] = {size_t(1) << 20, 0, size_t(64) << 10};
  const int ranks[] = {2, 4, 32};
  int checked = 0;
  for (Collective coll : colls)
    for (gpu::Mode mode : modes)
      for (size_t two_shot_min : two_shot_mins)
        for (size_t direct_min : direct_mins)
          for (int p : ranks)
            for (size_t bytes = 1; bytes <= (size_t(256) << 20); bytes *= 2)
              for (size_t delta : {size_t(0), size_t(1)})
                for (int flags = 0; flags < 16; ++flags) {
                  Settings s;
                  s.mode = mode;
                  s.two_shot_min = two_shot_min;
                  s.direct_min = direct_min;
                  s.reduce_scatter_direct_min = direct_min;
                  RuleCall r{coll, bytes - delta, bool(flags & 1), bool(flags & 2),
                             // copy_engine mode allows no kernels; MPS or one GPU per rank decide the rest
                             mode != gpu::Mode::copy_engine && (flags & 4), bool(flags & 8)};
                  if (coll != Collective::reduce_scatter) r.block_form = false;
                  const char* want = reference_rule(r, s);
                  const Algorithm* got = argmin(r, s, unsigned(bytes * 31 + p * 7 + flags));
                  std::string why;
                  const Algorithm* rule = gpu::rule_pick(r, s, &why);
                  ASSERT_EQ(want == nullptr, got == nullptr) << collective_name(coll) << " " << r.bytes;
                  if (!want) continue;
                  EXPECT_STREQ(got->name, want) << collective_name(coll) << " bytes " << r.bytes << " p " << p
                                                << " flags " << flags << " two_shot_min " << two_shot_min
                                                << " direct_min " << direct_min;
                  EXPECT_EQ(got, rule);
                  EXPECT_FALSE(why.empty());
                  ++checked;
                }
  EXPECT_GT(checked, 100000);
}

TEST(GpuSelect, RuleReasonsKeepTheirWording) {
  Settings s;
  std::string why;
  RuleCall r{Collective::allreduce, size_t(4) << 20, true, false, true, false};
  EXPECT_STREQ(gpu::rule_pick(r, s, &why)->name, "gpu_direct");
  EXPECT_EQ(why, "from WEFT_GPU_ALLREDUCE_DIRECT_MIN (4194304 bytes)");
  r.bytes = size_t(2) << 20;
  EXPECT_STREQ(gpu::rule_pick(r, s, &why)->name, "gpu_one_shot");
  EXPECT_EQ(why, "a blocking call below WEFT_GPU_ALLREDUCE_DIRECT_MIN (4194304 bytes)");
  r.blocking = false;
  EXPECT_STREQ(gpu::rule_pick(r, s, &why)->name, "gpu_two_shot");
  r.blocking = true;
  r.bytes = 100;
  gpu::rule_pick(r, s, &why);
  EXPECT_EQ(why, "below WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN (1048576 bytes)");
  r.kernels = false;
  s.mode = gpu::Mode::copy_engine;
  EXPECT_STREQ(gpu::rule_pick(r, s, &why)->name, "gpu_copy_engine");
  EXPECT_EQ(why, "WEFT_GPU_COLL_MODE=copy_engine");
  r.spans_nodes = true;
  EXPECT_STREQ(gpu::rule_pick(r, s, &why)->name, "gpu_hier");
  EXPECT_EQ(why.rfind("the only GPU algorithm across nodes", 0), 0u);
}

}  // namespace

// WEFT_GPU_FUSED: auto (the default) fuses allreduce calls from 256 KiB, on above one launch's
// 4 KiB, off never; the split size is read as given; automatic registration from 256 KiB, 0 off.
TEST(GpuSelect, FusedSettingsFromTheEnvironment) {
  struct Case {
    const char* value;
    size_t fused_min;
  };
  const Case cases[] = {{nullptr, size_t(4) << 20}, {"auto", size_t(4) << 20}, {"on", 4097},
                        {"off", std::numeric_limits<size_t>::max()}};
  for (const Case& c : cases) {
    const std::string var = c.value ? std::string("WEFT_GPU_FUSED=") + c.value : "PATH=/bin";
    const char* env[] = {var.c_str(), "WEFT_GPU_FUSED_SPLIT_MIN=2m", nullptr};
    Config cfg;
    ASSERT_EQ(Config::load(env, &cfg), Status::ok) << var;
    const gpu::Settings s = gpu_settings(cfg);
    EXPECT_EQ(s.fused_min, c.fused_min) << var;
    EXPECT_EQ(s.fused_split_min, size_t(2) << 20) << var;
    EXPECT_EQ(s.auto_register_min, size_t(256) << 10) << var;  // the default
  }
  const char* off[] = {"WEFT_GPU_AUTO_REGISTER_MIN=0", nullptr};
  Config cfg;
  ASSERT_EQ(Config::load(off, &cfg), Status::ok);
  EXPECT_EQ(gpu_settings(cfg).auto_register_min, 0u);
  // WEFT_GPU_FUSED_MIN moves auto's start, never below the single-block kernel's reach.
  const char* from_512k[] = {"WEFT_GPU_FUSED_MIN=512k", nullptr};
  ASSERT_EQ(Config::load(from_512k, &cfg), Status::ok);
  EXPECT_EQ(gpu_settings(cfg).fused_min, size_t(512) << 10);
  const char* from_1[] = {"WEFT_GPU_FUSED_MIN=1", nullptr};
  ASSERT_EQ(Config::load(from_1, &cfg), Status::ok);
  EXPECT_EQ(gpu_settings(cfg).fused_min, 4097u);
  const char* on_ignores_it[] = {"WEFT_GPU_FUSED=on", "WEFT_GPU_FUSED_MIN=8m", nullptr};
  ASSERT_EQ(Config::load(on_ignores_it, &cfg), Status::ok);
  EXPECT_EQ(gpu_settings(cfg).fused_min, 4097u);
}
