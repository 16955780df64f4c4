// Validation flags (see validation_cli.h).
#include "sim/cli/validation_cli.h"

#include "sim/cli/commands.h"

namespace servesim {

void AddValidationOptions(CLI::App* cmd, ValidationOptions* o) {
  cmd->add_option("--window", o->window_requests,
                  "Requests in one validation window (one `servesim run` of that "
                  "length; default 200000): the answer is the rate at which a window "
                  "meets the SLO with probability --window-share; 0 keeps the "
                  "screening answer (not validated)")
      ->check(NumberIn(0, 1e8));
  cmd->add_option("--window-share", o->share,
                  "Share of windows that must meet the SLO (default 0.95)")
      ->check(NumberIn(0.51, 0.999));
  cmd->add_option("--rate-precision", o->rate_precision,
                  "Relative 95% half-width of the validated answer that ends the "
                  "validation (default 0.03)")
      ->check(NumberIn(0.001, 0.5));
  cmd->add_option("--max-windows", o->max_windows,
                  "Budget of validation windows (default 40; at least 10)")
      ->check(NumberIn(10, 10000));
}

}  // namespace servesim
