// MFU and MBU only where step times have a FLOP/byte basis: the linear cost
// model's constants are set by hand (md1_teaching printed MFU 114.9%), so
// its runs leave them unknown everywhere they are reported; the engine's
// busy share is never called "GPU busy".
#include <gtest/gtest.h>

#include <sstream>

#include "sim/analysis/point_stats.h"
#include "sim/report/writers.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;

// Steps of 20 ms that do an 8B model's work: "MFU" would pass 100%.
std::string BusyLinear() {
  return LinearScenario(R"("step_s": 0.02)",
                        R"("arrival": {"process": "constant", "rate": 40},
                           "input_len": {"dist": "fixed", "value": 2000},
                           "output_len": {"dist": "fixed", "value": 20},
                           "num_requests": 200)");
}

TEST(Utilization, LinearCostModelLeavesMfuAndMbuUnknown) {
  const Scenario sc = MustParse(BusyLinear());
  EXPECT_FALSE(sc.cost_model->HasHardwareBasis());
  const RunSummary s = RunScenario(sc);
  EXPECT_LT(s.mfu, 0);
  EXPECT_LT(s.mbu, 0);
  EXPECT_GT(s.gpu_busy_fraction, 0.5);  // the number is kept, under its name
  const nlohmann::json j = ResultJson(sc, s);
  EXPECT_TRUE(j["servesim"]["mfu"].is_null());
  EXPECT_TRUE(j["servesim"]["mbu"].is_null());
  std::ostringstream os;
  WriteConsoleReport(sc, s, os);
  const std::string text = os.str();
  EXPECT_NE(text.find("MFU -, MBU -, engine busy "), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU busy"), std::string::npos) << text;
  EXPECT_EQ(text.find("MFU 1"), std::string::npos) << text;
}

TEST(Utilization, RooflineRunsReportMfuAndNeverGpuBusy) {
  const Scenario sc =
      MustParse(EmbeddedDefaultScenario(), {"workload.num_requests=300"});
  EXPECT_TRUE(sc.cost_model->HasHardwareBasis());
  const RunSummary s = RunScenario(sc);
  EXPECT_GT(s.mfu, 0);
  EXPECT_LT(s.mfu, 1);
  std::ostringstream os;
  WriteConsoleReport(sc, s, os);
  EXPECT_NE(os.str().find("MFU "), std::string::npos);
  EXPECT_EQ(os.str().find("MFU -"), std::string::npos);
  EXPECT_EQ(os.str().find("GPU busy"), std::string::npos) << os.str();
}

// Sweep and capacity points: one replication without a FLOP basis makes the
// point's MFU unknown (null in JSON), never a mean of -1s.
TEST(Utilization, PointWithUnknownMfuIsNull) {
  RunSummary a = RunScenario(MustParse(BusyLinear()));
  RunSummary b = a;
  ASSERT_LT(a.mfu, 0);
  nlohmann::json j = PointJson(AggregatePoint({&a, &b}));
  EXPECT_TRUE(j["mfu"].is_null()) << j.dump();
  EXPECT_TRUE(j["mbu"].is_null()) << j.dump();
  a.mfu = b.mfu = 0.25;
  a.mbu = b.mbu = 0.5;
  j = PointJson(AggregatePoint({&a, &b}));
  EXPECT_DOUBLE_EQ(j["mfu"]["mean"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["mbu"]["mean"].get<double>(), 0.5);
}

}  // namespace
}  // namespace servesim
