//===- FileIO.h - Read-only file mappings and atomic file writes ----------===//
//
// Private to the runtime. MappedFile maps a whole file read-only (shared by
// every view that needs it alive); AtomicFileWriter writes a file next to its
// destination and renames it into place on commit(), so an interrupted write
// never leaves a half-written file under the user's name.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_FILEIO_H
#define TURBINE_RUNTIME_SRC_FILEIO_H

#include "turbine/runtime/Status.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace turbine::runtime {

/// A read-only mapping of a whole file.
class MappedFile {
public:
  /// Maps `path`; an empty file maps to no bytes.
  static Result<std::shared_ptr<const MappedFile>> open(const std::string &path);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

private:
  MappedFile() = default;
  const uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
};

/// Writes `path` through a temporary file in the same directory.
class AtomicFileWriter {
public:
  static Result<std::unique_ptr<AtomicFileWriter>> create(const std::string &path);
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFileWriter();

  Status write(const void *bytes, uint64_t size);
  /// Writes `count` zero bytes.
  Status pad(uint64_t count);
  uint64_t offset() const { return offset_; }
  /// Flushes, closes and renames the temporary file to the destination.
  Status commit();

private:
  AtomicFileWriter(std::string path, std::string tempPath, std::FILE *file)
      : path_(std::move(path)), tempPath_(std::move(tempPath)), file_(file) {}
  std::string path_;
  std::string tempPath_;
  std::FILE *file_ = nullptr;
  uint64_t offset_ = 0;
  bool committed_ = false;
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_SRC_FILEIO_H
