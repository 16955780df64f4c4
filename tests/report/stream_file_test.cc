// Streamed output files: a file far past the writeback interval arrives
// whole and in order, replaces an older file at the same path atomically,
// and nothing is left beside it.
#include "sim/report/stream_file.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/report/step_output_util.h"

namespace servesim {
namespace {

using testing::ReadAll;
using testing::ScratchDir;
using testing::WriteAll;

void ExpectLargeFileReplacesTheOldOne(bool write_back) {
  ScratchDir dir;
  const std::string path = dir.Path("out.txt");
  WriteAll(path, "old contents\n");  // an earlier run's file
  // 40 MB in lines of varying length: writeback starts at least twice.
  std::string want;
  auto f = StreamFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  if (write_back) (*f)->WriteBackAsItGrows();
  for (int64_t k = 0; want.size() < (40u << 20); ++k) {
    const std::string line =
        std::to_string(k) + std::string(static_cast<size_t>(k % 97), 'x') + "\n";
    want += line;
    if (k % 2 == 0) {
      (*f)->Write(line);
    } else {
      char* p = (*f)->Reserve(line.size());
      line.copy(p, line.size());
      (*f)->Advance(p + line.size());
    }
  }
  EXPECT_EQ(ReadAll(path), "old contents\n");  // untouched until Finish
  ASSERT_TRUE((*f)->Finish().ok());
  const std::string got = ReadAll(path);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  EXPECT_EQ(dir.List(), "out.txt");  // no temporary file left beside it
}

TEST(StreamFile, LargeFileReplacesTheOldOneWholeAndInOrder) {
  ExpectLargeFileReplacesTheOldOne(/*write_back=*/false);
}

TEST(StreamFile, LargeFileWrittenBackAsItGrowsReplacesTheOldOneWhole) {
  ExpectLargeFileReplacesTheOldOne(/*write_back=*/true);
}

}  // namespace
}  // namespace servesim
