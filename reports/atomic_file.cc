#include "reports/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "hw/user_error.h"

namespace cs::reports {

namespace {
mode_t new_file_mode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    throw hw::UserError(path_, 0, 0, "is a directory; give a file name to write");
  std::vector<char> name(path_.begin(), path_.end());
  const std::string suffix = ".tmp.XXXXXX";
  name.insert(name.end(), suffix.begin(), suffix.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) throw hw::UserError(path_, 0, 0, std::string("cannot write: ") + std::strerror(errno));
  ::fchmod(fd, new_file_mode(path_));  // mkstemp creates 0600
  ::close(fd);
  temp_ = name.data();
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    std::remove(temp_.c_str());
    throw hw::UserError(path_, 0, 0, "cannot write the temporary file " + temp_);
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::remove(temp_.c_str());
}

void AtomicFile::finish_writing() {
  if (written_) return;
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail())
    throw hw::UserError(path_, 0, 0, "writing failed (disk full?); the file was left unchanged");
  written_ = true;
}

void AtomicFile::commit() {
  finish_writing();
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw hw::UserError(path_, 0, 0, std::string("cannot replace the file: ") + std::strerror(errno));
  committed_ = true;
}

}  // namespace cs::reports
