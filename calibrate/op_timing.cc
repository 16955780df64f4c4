// OpKindName (see op_timing.h). The names are the simulator's profile op
// names, so a timing and a fitted model of the same op always agree.
#include "calibrate/op_timing.h"

#include "sim/cost/op_features.h"

namespace servesim::calibrate {

const char* OpKindName(OpKind kind) {
  return ProfileOpName(static_cast<ProfileOp>(kind));
}

}  // namespace servesim::calibrate
