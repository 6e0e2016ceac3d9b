#include "reports/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "hw/user_error.h"

namespace cs::reports {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::vector<char> name(path_.begin(), path_.end());
  const std::string suffix = ".tmp.XXXXXX";
  name.insert(name.end(), suffix.begin(), suffix.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) throw hw::UserError(path_, 0, 0, std::string("cannot write: ") + std::strerror(errno));
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

void AtomicFile::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail())
    throw hw::UserError(path_, 0, 0, "writing failed (disk full?); the file was left unchanged");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw hw::UserError(path_, 0, 0, std::string("cannot replace the file: ") + std::strerror(errno));
  committed_ = true;
}

}  // namespace cs::reports
