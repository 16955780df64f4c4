// Writing an output file (reports, profiles, CSVs) atomically, with the
// errors every command reports the same way. The bytes go to a temporary
// file beside the destination, which is flushed, checked and renamed onto
// it: an output file is either complete or absent, and a failed write leaves
// any earlier file intact. Errors name the path and the reason, e.g.
// "out/x.json: cannot write: No space left on device".
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"

namespace servesim {

Status WriteFileWith(const std::string& path,
                     const std::function<void(std::ostream&)>& write);
Status WriteTextFile(const std::string& path, const std::string& text);

// Whether `path` could be written now (its directory exists and takes a new
// file; it is not a directory): checked before a run so a bad path fails at
// once rather than after the simulation. Creates nothing that stays.
Status CheckOutputPath(const std::string& path);

// Each (option, path) pair with a non-empty path must name a different file
// and be writable: "--save-result and --save-detailed name the same file x".
// None may name one of `inputs` (the scenario, the log read): writing it
// would overwrite what the run was made from.
Status CheckOutputPaths(
    const std::vector<std::pair<std::string, std::string>>& outputs,
    const std::vector<std::string>& inputs = {});

// An existing path that is neither a regular file nor a directory (a device
// such as /dev/null or /dev/full, a FIFO): written in place, since there is
// nothing to rename onto.
bool IsSpecialOutput(const std::string& path);

// strerror(errnum) as a std::string ("No space left on device").
std::string ErrnoText(int errnum);

}  // namespace servesim
