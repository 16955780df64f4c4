// Token lengths read from one column of a CSV trace (for example the
// ShareGPT statistics in ../shared/traces/), for the "empirical" length
// distribution and for any trace reader that needs a length column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

// Reads every data row's value in `column` of the CSV file at `path`, in
// file order. The first line must be a header naming the columns; fields are
// comma-separated, may be double-quoted, and are trimmed of spaces. Values
// must be non-negative integers ("1730" or an integral "1730.0"). Every row
// must have as many fields as the header; trailing blank lines are allowed,
// blank lines between rows are not. No row is ever skipped: any bad row, a
// missing column, or a file with no data rows throws a one-line ConfigError
// naming the file and line, e.g. "x.csv:17: column num_prefill_tokens:
// expected a non-negative integer, got 'abc'".
std::vector<int32_t> ReadLengthColumn(const std::string& path,
                                      const std::string& column);

}  // namespace servesim
