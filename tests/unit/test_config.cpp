#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "runtime/config.h"
#include "runtime/log.h"

using namespace weft;

TEST(Config, ParsesSizesWithBinaryUnits) {
  uint64_t n = 0;
  EXPECT_TRUE(parse_size("4096", &n));
  EXPECT_EQ(n, 4096u);
  EXPECT_TRUE(parse_size("64k", &n));
  EXPECT_EQ(n, 65536u);
  EXPECT_TRUE(parse_size("4M", &n));
  EXPECT_EQ(n, 4u << 20);
  EXPECT_TRUE(parse_size("1g", &n));
  EXPECT_EQ(n, 1ull << 30);
  EXPECT_TRUE(parse_size("2kb", &n));
  EXPECT_EQ(n, 2048u);
  EXPECT_FALSE(parse_size("", &n));
  EXPECT_FALSE(parse_size("k", &n));
  EXPECT_FALSE(parse_size("12x", &n));
  EXPECT_FALSE(parse_size("99999999999999999999", &n));
  EXPECT_FALSE(parse_size("20000000000g", &n));
}

TEST(Config, ParsesBooleans) {
  bool b = false;
  EXPECT_TRUE(parse_bool("yes", &b));
  EXPECT_TRUE(b);
  EXPECT_TRUE(parse_bool("OFF", &b));
  EXPECT_FALSE(b);
  EXPECT_FALSE(parse_bool("maybe", &b));
}

TEST(Config, DefaultsApplyWhenUnset) {
  const char* env[] = {"PATH=/bin", nullptr};
  Config cfg;
  ASSERT_EQ(Config::load(env, &cfg), Status::ok);
  EXPECT_EQ(cfg.value("WEFT_DEBUG"), "WARN");
  EXPECT_FALSE(cfg.is_set("WEFT_DEBUG"));
  EXPECT_EQ(cfg.size("WEFT_SHM_SPLIT_MIN"), 65536u);
  EXPECT_EQ(cfg.integer("WEFT_SPIN_COUNT"), 2000);
}

TEST(Config, ReadsValuesFromTheEnvironment) {
  const char* env[] = {"WEFT_DEBUG=info", "WEFT_SHM_SPLIT_MIN=1M", "WEFT_SPIN_COUNT=7",
                       "WEFT_REQUIRE_FAST_PATH=1", nullptr};
  Config cfg;
  ASSERT_EQ(Config::load(env, &cfg), Status::ok);
  EXPECT_EQ(cfg.value("WEFT_DEBUG"), "info");
  EXPECT_TRUE(cfg.is_set("WEFT_DEBUG"));
  EXPECT_EQ(cfg.size("WEFT_SHM_SPLIT_MIN"), 1u << 20);
  EXPECT_EQ(cfg.integer("WEFT_SPIN_COUNT"), 7);
  EXPECT_TRUE(cfg.boolean("WEFT_REQUIRE_FAST_PATH"));
}

TEST(Config, RejectsMalformedValuesNamingTheVariable) {
  for (const char* bad : {"WEFT_SPIN_COUNT=fast", "WEFT_WAIT_POLICY=sometimes",
                          "WEFT_SHM_SPLIT_MIN=big", "WEFT_REQUIRE_FAST_PATH=perhaps"}) {
    const char* env[] = {bad, nullptr};
    Config cfg;
    EXPECT_EQ(Config::load(env, &cfg), Status::invalid_arg) << bad;
    std::string name(bad, strchr(bad, '=') - bad);
    EXPECT_NE(error_detail().find(name), std::string::npos) << error_detail();
  }
}

TEST(Config, EveryRegisteredVariableHasADocAndAValidDefault) {
  for (const auto& v : config_vars()) {
    EXPECT_TRUE(std::string(v.name).rfind("WEFT_", 0) == 0) << v.name;
    EXPECT_GT(strlen(v.doc), 10u) << v.name;
    std::string entry = std::string(v.name) + "=" + v.default_value;
    const char* env[] = {entry.c_str(), nullptr};
    Config cfg;
    EXPECT_EQ(Config::load(env, &cfg), Status::ok) << entry;
  }
}

TEST(Config, CaptureKeepsValuesAndCheckNamesTheMalformedOne) {
  const char* env[] = {"WEFT_SPIN_COUNT=fast", "WEFT_DEBUG=info", nullptr};
  const Config cfg = Config::capture(env);
  EXPECT_EQ(cfg.value("WEFT_SPIN_COUNT"), "fast");
  EXPECT_TRUE(cfg.is_set("WEFT_DEBUG"));
  EXPECT_EQ(cfg.check(), Status::invalid_arg);
  EXPECT_NE(error_detail().find("WEFT_SPIN_COUNT"), std::string::npos) << error_detail();
}

// The process's snapshot is read once: later changes to the environment are not seen.
TEST(Config, ProcessSnapshotIsReadOnce) {
  const std::string before(process_config().value("WEFT_SPIN_COUNT"));
  const int64_t spin = setting_integer("WEFT_SPIN_COUNT");
  setenv("WEFT_SPIN_COUNT", before == "31337" ? "4242" : "31337", 1);
  EXPECT_EQ(process_config().value("WEFT_SPIN_COUNT"), before);
  EXPECT_EQ(setting_integer("WEFT_SPIN_COUNT"), spin);
  unsetenv("WEFT_SPIN_COUNT");
}

// In a fresh process (death-test child): the typed accessors read the environment, and a
// malformed value is warned about and gives way to the registered default.
TEST(ConfigDeathTest, SettingsWithoutInitFallBackToDefaultsOnMalformedValues) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("WEFT_RMA_CMA", "perhaps", 1);
        setenv("WEFT_KV_IMPORT_TIMEOUT", "-5", 1);
        setenv("WEFT_COPY_STREAMING_MIN", "1m", 1);
        setenv("WEFT_FAKE_NODES", "", 1);
        const bool ok = setting_bool("WEFT_RMA_CMA") && setting_integer("WEFT_KV_IMPORT_TIMEOUT", 0) == 10000 &&
                        setting_size("WEFT_COPY_STREAMING_MIN") == (1u << 20) &&
                        setting_integer("WEFT_FAKE_NODES", 1) == 1 && process_config().is_set("WEFT_FAKE_NODES");
        exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0),
      "WEFT_RMA_CMA=perhaps is not a boolean; 1 \\(the default\\) is used(.|\n)*"
      "WEFT_KV_IMPORT_TIMEOUT=-5 is not a non-negative number; 10000 \\(the default\\) is used");
}

TEST(Logging, ParsesLevelsAndSubsystemLists) {
  LogLevel l;
  EXPECT_TRUE(parse_log_level("INFO", &l));
  EXPECT_EQ(l, LogLevel::info);
  EXPECT_TRUE(parse_log_level("trace", &l));
  EXPECT_EQ(l, LogLevel::trace);
  EXPECT_FALSE(parse_log_level("loud", &l));

  uint32_t mask = 0;
  std::string bad;
  EXPECT_TRUE(parse_subsys_list("init,pt2pt", &mask, &bad));
  EXPECT_EQ(mask, (1u << unsigned(Subsys::init)) | (1u << unsigned(Subsys::pt2pt)));
  EXPECT_TRUE(parse_subsys_list("^coll", &mask, &bad));
  EXPECT_EQ(mask & (1u << unsigned(Subsys::coll)), 0u);
  EXPECT_NE(mask & (1u << unsigned(Subsys::pt2pt)), 0u);
  EXPECT_FALSE(parse_subsys_list("init,bogus", &mask, &bad));
  EXPECT_EQ(bad, "bogus");
}
