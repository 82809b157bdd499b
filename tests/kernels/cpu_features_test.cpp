// tests/kernels/cpu_features_test.cpp: instruction-set levels, FOLIO_ISA and
// the override; prints which levels this host covers.
#include "kernels/cpu_features.h"

#include <gtest/gtest.h>
#include <stdlib.h>  // setenv, unsetenv (POSIX)

#include <cstdio>
#include <string>

#include "base/error.h"
#include "isa_levels.h"

namespace folio::kernels {
namespace {

// Restores FOLIO_ISA's cap to "none" (the detected level) when done.
struct EnvIsa {
  explicit EnvIsa(const char* value) { setenv("FOLIO_ISA", value, 1); }
  ~EnvIsa() {
    setenv("FOLIO_ISA", std::string(isa_name(detected_isa())).c_str(), 1);
    configure_isa_from_env();
    unsetenv("FOLIO_ISA");
  }
  EnvIsa(const EnvIsa&) = delete;
  EnvIsa& operator=(const EnvIsa&) = delete;
};

TEST(CpuFeatures, ReportsTheLevelsThisHostCovers) {
  std::string covered, missing;
  for (Isa isa : kAllIsas) {
    std::string& s = isa <= detected_isa() ? covered : missing;
    s += (s.empty() ? "" : " ") + std::string(isa_name(isa));
  }
  std::printf("[isa] kernel tests cover: %s; not covered on this CPU: %s (features: %s)\n",
              covered.c_str(), missing.empty() ? "none" : missing.c_str(),
              cpu_feature_summary().c_str());
  EXPECT_EQ(testing::supported_isas().back(), detected_isa());
  EXPECT_EQ(active_isa(), detected_isa());
}

TEST(CpuFeatures, NamesRoundTripAndBadNamesAreRefused) {
  for (Isa isa : kAllIsas) EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  try {
    parse_isa("avx1024");
    FAIL() << "accepted avx1024";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scalar, avx2, avx512, amx"), std::string::npos);
  }
  EXPECT_THROW(parse_isa(""), Error);
  EXPECT_THROW(parse_isa("AVX2"), Error);
}

TEST(CpuFeatures, FolioIsaCapsTheLevel) {
  {
    EnvIsa env("scalar");
    configure_isa_from_env();
    EXPECT_EQ(active_isa(), Isa::kScalar);
    IsaOverride force(Isa::kAvx2);  // tests may still force any supported level
    EXPECT_EQ(active_isa(), detected_isa() >= Isa::kAvx2 ? Isa::kAvx2 : Isa::kScalar);
  }
  EXPECT_EQ(active_isa(), detected_isa());
}

TEST(CpuFeatures, FolioIsaRefusesUnknownAndUnsupportedLevels) {
  {
    EnvIsa env("fastest");
    EXPECT_THROW(configure_isa_from_env(), Error);
  }
  if (detected_isa() != Isa::kAmx) {
    EnvIsa env("amx");
    try {
      configure_isa_from_env();
      FAIL() << "accepted a level above the CPU's";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("supports at most"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(active_isa(), detected_isa());
}

TEST(CpuFeatures, OverrideClampsToTheCpuAndRestores) {
  {
    IsaOverride force(Isa::kAmx);
    EXPECT_EQ(active_isa(), detected_isa());
    {
      IsaOverride inner(Isa::kScalar);
      EXPECT_EQ(active_isa(), Isa::kScalar);
    }
    EXPECT_EQ(active_isa(), detected_isa());
  }
  EXPECT_EQ(active_isa(), detected_isa());
}

TEST(CpuFeatures, DecodePanelsParseOverrideAndRefuseBadNames) {
  for (DecodePanels p : {DecodePanels::kOne, DecodePanels::kTwo})
    EXPECT_EQ(parse_decode_panels(decode_panels_name(p)), p);
  EXPECT_THROW(parse_decode_panels("three"), Error);
  const DecodePanels before = decode_panels();
  std::printf("[isa] decode panels on this CPU: %s\n",
              std::string(decode_panels_name(before)).c_str());
  {
    DecodePanelsOverride force(before == DecodePanels::kOne ? DecodePanels::kTwo
                                                            : DecodePanels::kOne);
    EXPECT_NE(decode_panels(), before);
  }
  EXPECT_EQ(decode_panels(), before);
  setenv("FOLIO_DECODE_PANELS", "sideways", 1);
  try {
    configure_isa_from_env();
    ADD_FAILURE() << "FOLIO_DECODE_PANELS=sideways was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected one or two"), std::string::npos) << e.what();
  }
  unsetenv("FOLIO_DECODE_PANELS");
  EXPECT_EQ(decode_panels(), before);
}

TEST(CpuFeatures, StreamAheadDefaultsByVendorParsesAndRefusesBadValues) {
  const std::size_t before = stream_ahead();
  std::printf("[isa] weights requested %zu bytes ahead on this CPU\n", before);
  EXPECT_TRUE(before == 2048 || before == 16384) << before;
  EXPECT_EQ(before, stream_ahead_default());
  EXPECT_EQ(parse_stream_ahead("0"), 0u);
  EXPECT_EQ(parse_stream_ahead("64"), 64u);
  EXPECT_EQ(parse_stream_ahead("16384"), 16384u);
  EXPECT_EQ(parse_stream_ahead("1048576"), 1048576u);
  for (const char* bad : {"", "100", "-64", "16KiB", " 64", "1048640", "99999999999999999999"}) {
    try {
      parse_stream_ahead(bad);
      ADD_FAILURE() << "FOLIO_STREAM_AHEAD=" << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("a multiple of 64 from 0 to 1048576"), std::string::npos)
          << e.what();
    }
  }
  setenv("FOLIO_STREAM_AHEAD", "4096", 1);
  configure_isa_from_env();
  EXPECT_EQ(stream_ahead(), 4096u);
  setenv("FOLIO_STREAM_AHEAD", "4097", 1);
  EXPECT_THROW(configure_isa_from_env(), Error);
  EXPECT_EQ(stream_ahead(), 4096u);  // a refused value leaves the setting alone
  setenv("FOLIO_STREAM_AHEAD", std::to_string(before).c_str(), 1);
  configure_isa_from_env();
  unsetenv("FOLIO_STREAM_AHEAD");
  EXPECT_EQ(stream_ahead(), before);
}

}  // namespace
}  // namespace folio::kernels
