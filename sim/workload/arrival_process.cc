// Open-loop arrival processes: Poisson, gamma (bursty) and constant rate.
// The gamma parameterisation follows vllm bench serve: shape = burstiness,
// scale = 1 / (rate * burstiness), so the mean gap is 1/rate for any
// burstiness and the squared coefficient of variation of gaps is
// 1/burstiness (1 is Poisson, below 1 is burstier, above 1 is smoother).
#include "sim/workload/arrival_process.h"

#include <cstdio>

#include "sim/core/status.h"
#include "sim/core/time.h"

namespace servesim {
namespace {

std::string FormatRate(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

class PoissonArrivals : public ArrivalProcess {
 public:
  explicit PoissonArrivals(double rate) : rate_(rate) {}
  double NextGapSeconds(Rng& rng) const override {
    return rng.Exponential(1.0 / rate_);
  }
  double rate() const override { return rate_; }
  std::string Describe() const override {
    return "poisson(rate=" + FormatRate(rate_) + "/s)";
  }

 private:
  double rate_;
};

class GammaArrivals : public ArrivalProcess {
 public:
  GammaArrivals(double rate, double burstiness)
      : rate_(rate), burstiness_(burstiness) {}
  double NextGapSeconds(Rng& rng) const override {
    return rng.Gamma(burstiness_, 1.0 / (rate_ * burstiness_));
  }
  double rate() const override { return rate_; }
  std::string Describe() const override {
    return "gamma(rate=" + FormatRate(rate_) +
           "/s, burstiness=" + FormatRate(burstiness_) + ")";
  }

 private:
  double rate_;
  double burstiness_;
};

class ConstantArrivals : public ArrivalProcess {
 public:
  explicit ConstantArrivals(double rate) : rate_(rate) {}
  double NextGapSeconds(Rng&) const override { return 1.0 / rate_; }
  double rate() const override { return rate_; }
  std::string Describe() const override {
    return "constant(rate=" + FormatRate(rate_) + "/s)";
  }

 private:
  double rate_;
};

// A mean gap of at most kMaxIntervalSeconds, and at least a nanosecond (the
// clock's resolution): gaps beyond int64 nanoseconds used to wrap.
Range RateRange() { return Range::Closed(1.0 / kMaxIntervalSeconds, 1e9); }
// CV^2 = 1/burstiness from 1000 (nearly every gap 0) to 0.001 (nearly
// constant); beyond, the gamma draws degenerate (shape 1e308 made every gap 0).
Range BurstinessRange() { return Range::Closed(1e-3, 1e3); }

}  // namespace

std::unique_ptr<ArrivalProcess> MakeArrivalProcess(const JsonView& cfg) {
  if (!cfg.raw().is_object()) {
    throw ConfigError(
        cfg.file() + ": " + (cfg.path().empty() ? "/" : cfg.path()) +
        ": expected an arrival process object, got " + DescribeJson(cfg.raw()));
  }
  // "closed" is listed so a typo of it is still suggested; the caller owns it.
  const std::string process =
      cfg.Choice("process", "", {"poisson", "gamma", "constant", "closed"});
  if (process == "closed") {
    cfg.FailMessage("process",
                    "\"closed\" is a closed-loop workload, configured by the "
                    "workload loader, not an open-loop arrival process");
  }
  if (process == "gamma") {
    cfg.AllowKeys({"process", "rate", "burstiness"});
    const double rate = cfg.RequireNumber("rate", RateRange());
    const double burstiness = cfg.RequireNumber("burstiness", BurstinessRange());
    return std::make_unique<GammaArrivals>(rate, burstiness);
  }
  // Burstiness only means something for gamma; accepting it here would
  // suggest it had an effect.
  if (cfg.raw().contains("burstiness")) {
    cfg.FailMessage("burstiness", "only a gamma process takes burstiness (" +
                                      process +
                                      " has none); use \"process\": \"gamma\"");
  }
  cfg.AllowKeys({"process", "rate"});
  const double rate = cfg.RequireNumber("rate", RateRange());
  if (process == "poisson") return std::make_unique<PoissonArrivals>(rate);
  return std::make_unique<ConstantArrivals>(rate);
}

}  // namespace servesim
