// Where servesim finds its data (models/, scenarios/) and the shared traces,
// and how input files are opened: only something that can be read as a file,
// with the reason named when it cannot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>

namespace servesim {

// The repository root: $SERVESIM_ROOT if set, else the source directory the
// binary was built from.
std::string RepoRoot();
// Resolves a relative path: as given if it exists from the working
// directory, else relative to RepoRoot(). Absolute paths are returned as is.
std::string ResolveDataPath(const std::string& path);

// Checks that `path` names an input file: a regular file (or, with
// allow_fifo, a pipe such as <(zcat log.gz)), so a directory, /dev/zero or
// /dev/urandom fail at once instead of hanging or exhausting memory. Throws
// ConfigError "<path>: cannot open <what>: <reason>", the reason from errno
// ("No such file or directory") or "is a directory", "is a character device
// (expected a regular file)".
void CheckInputFile(const std::string& path, const std::string& what,
                    bool allow_fifo = false);
// One line of a text input (a trace, a CSV), without its '\n', read from
// `in` with a bound on its length: a line longer than kMaxInputLineBytes
// is an error, never memory exhausted, and a read error (EIO, ENOMEM) is an
// error, never the end of the file. Returns false at the end of the input.
// Throws ConfigError "<path>:<line_no>: line longer than 16 MiB ..." or
// "<path>:<line_no>: read error: <reason>".
inline constexpr size_t kMaxInputLineBytes = size_t{16} << 20;
bool ReadInputLine(std::istream& in, std::string* line, const std::string& path,
                   int64_t line_no, size_t max_bytes = kMaxInputLineBytes);

// CheckInputFile (pipes allowed), then the whole file; a file larger than
// max_bytes is an error ("<path>: <what> is 20.0 MiB; expected at most
// 16.0 MiB"), and at most max_bytes + 1 bytes are read.
std::string ReadInputFile(const std::string& path, const std::string& what,
                          uintmax_t max_bytes);

}  // namespace servesim
