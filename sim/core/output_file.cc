// Output files with uniform error reporting (see output_file.h).
#include "sim/core/output_file.h"

#include <fstream>

namespace servesim {

Status WriteFileWith(const std::string& path,
                     const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path);
  if (!out) return Status::Error(path + ": cannot open for writing");
  write(out);
  out.close();
  if (!out) return Status::Error(path + ": write failed");
  return Status::Ok();
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  return WriteFileWith(path, [&](std::ostream& os) { os << text; });
}

}  // namespace servesim
