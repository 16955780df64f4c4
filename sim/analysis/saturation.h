// Saturation throughput of one replica, and the service-time moments the
// queueing-theory overlays use.
//
// Definition (the saturating run): the scenario's deployment and lengths
// under a closed loop of SaturatingClients clients with no think time and
// no client time outside the server (WithSaturatingLoop). Every client
// resends the moment its answer arrives, so the scheduler always has more
// work than max_num_seqs and the replica runs flat out. From its requests:
//   t_a = the finish time of the first 10% of finished requests (skips the
//         start, when all clients prefill at once),
//   t_b = the last send time (after it clients stop being replaced and the
//         batch drains),
//   mu  = departures in (t_a, t_b] / (t_b - t_a),
// with a 95% interval from 10 batch means (equal sub-windows of the window)
// and a stability check: the rates of the window's two halves agree within
// 5%. With heavy-tailed lengths a closed loop settles slowly (long requests
// accumulate in the batch), so the saturating run is at least 50 requests
// per client whatever the scenario's own length, and is doubled (up to
// twice) until it is stable: mu no longer moves with the scenario's run
// length.
// Service-time moments for M/G/1: E[S] = 1/mu and the squared coefficient
// of variation c^2 of the inter-departure gaps in that window. With one
// request at a time the server never idles, each gap is one service time,
// so these are exactly the moments of S; with continuous batching the
// replica is not a single server and the overlay is a reference only.
#pragma once

#include <cstdint>

#include "sim/analysis/confidence.h"
#include "sim/core/status.h"
#include "sim/engine/request.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct SaturationEstimate {
  double mu_rps = 0;          // requests/s at saturation
  Interval mu;                // 95% interval (batch means); mu.mean = mu_rps
  bool settled = false;       // the window's halves agree within 5%
  int64_t requests = 0;       // length of the saturating run
  double mean_service_s = 0;  // 1 / mu
  double scv = 0;             // c^2 of inter-departure gaps
  int clients = 0;
  int64_t departures = 0;     // in the window
  double window_s = 0;
  double output_tokens_per_s = 0;  // in the window
};

// Clients of the saturating run: 2 x max_num_seqs, and with the frontend
// on 2 more per API server, so that a slow API server (itself a queue of
// api_servers servers in front of the engine) is kept busy too when it is
// the bottleneck.
int SaturatingClients(const Scenario& s);

// From a saturating run's requests (finished ones are used).
SaturationEstimate SaturationFromRequests(const RequestTable& requests);

// Runs the saturating run (seed = scenario seed). Errors: the scenario
// cannot be turned into a closed loop.
StatusOr<SaturationEstimate> EstimateSaturation(const Scenario& base);

}  // namespace servesim
