//===- FileIO.cpp - Read-only file mappings and atomic file writes --------===//
#include "FileIO.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace turbine::runtime {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error("'" + path + "' is not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->size_ = static_cast<uint64_t>(info.st_size);
  if (file->size_ > 0) {
    void *mapped = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Status::error("cannot map '" + path + "': " + std::strerror(err));
    }
    file->data_ = static_cast<const uint8_t *>(mapped);
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(std::move(file));
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::create(const std::string &path) {
  std::string tempPath = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tempPath.data());
  if (fd < 0)
    return Status::error("cannot create a file next to '" + path + "': " + std::strerror(errno));
  ::fchmod(fd, 0644);
  std::FILE *file = ::fdopen(fd, "wb");
  if (!file) {
    ::close(fd);
    ::unlink(tempPath.c_str());
    return Status::error("cannot write '" + path + "': " + std::strerror(errno));
  }
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, tempPath, file));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_)
    std::fclose(file_);
  if (!committed_)
    ::unlink(tempPath_.c_str());
}

Status AtomicFileWriter::write(const void *bytes, uint64_t size) {
  if (size && std::fwrite(bytes, 1, size, file_) != size)
    return Status::error("cannot write '" + path_ + "': " + std::strerror(errno));
  offset_ += size;
  return Status::success();
}

Status AtomicFileWriter::pad(uint64_t count) {
  static const uint8_t zeros[4096] = {};
  while (count > 0) {
    uint64_t chunk = count < sizeof(zeros) ? count : sizeof(zeros);
    if (Status s = write(zeros, chunk); !s)
      return s;
    count -= chunk;
  }
  return Status::success();
}

Status AtomicFileWriter::commit() {
  std::FILE *file = file_;
  file_ = nullptr;
  if (std::fflush(file) != 0 || ::fsync(::fileno(file)) != 0) {
    std::fclose(file);
    return Status::error("cannot write '" + path_ + "': " + std::strerror(errno));
  }
  if (std::fclose(file) != 0)
    return Status::error("cannot write '" + path_ + "': " + std::strerror(errno));
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0)
    return Status::error("cannot create '" + path_ + "': " + std::strerror(errno));
  committed_ = true;
  return Status::success();
}

} // namespace turbine::runtime
