// One version everywhere: pyproject.toml (the Python package's metadata)
// states the same version as the C++ core (`servesim --version`,
// servesim.__version__).
#include "sim/core/version.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "sim/core/paths.h"

namespace servesim {
namespace {

TEST(Version, PyprojectStatesTheCoresVersion) {
  std::ifstream in(RepoRoot() + "/pyproject.toml");
  ASSERT_TRUE(in) << "no pyproject.toml at " << RepoRoot();
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(s, m, std::regex("\\nversion = \"([^\"]+)\"")));
  EXPECT_EQ(m[1].str(), kVersion);
}

}  // namespace
}  // namespace servesim
