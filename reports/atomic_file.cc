#include "reports/atomic_file.h"

#include <cerrno>
#include <climits>
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

// Whether the link `p` lies in /proc, as /proc/<pid>/fd/N does behind /dev/stdout and /dev/fd/N:
// it names a file a process has open, which may be shared (a shell's `>`), so it is written in
// place rather than replaced.
bool in_proc(const std::filesystem::path& p) {
  std::error_code ec;
  const auto dir = std::filesystem::canonical(p.has_parent_path() ? p.parent_path() : ".", ec);
  return !ec && dir.string().rfind("/proc/", 0) == 0;
}

struct Target {
  std::string file;  // the file to replace, or to write directly when `stream`
  bool stream;
};

// Where writing `path` goes: itself, the end of its chain of symbolic links, or itself as a stream.
Target resolve(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return {path, true};
  std::string p = path;
  for (int hops = 0;; ++hops) {
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {p, false};  // mkstemp reports errors
    if (hops == 40) throw hw::UserError(path, 0, 0, "cannot write: too many levels of symbolic links");
    if (in_proc(p)) return {path, true};
    std::vector<char> buf(PATH_MAX);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0 || static_cast<size_t>(n) == buf.size())
      throw hw::UserError(path, 0, 0, "cannot read the symbolic link " + p);
    std::filesystem::path next(std::string(buf.data(), static_cast<size_t>(n)));
    if (next.is_relative()) next = std::filesystem::path(p).parent_path() / next;
    p = next.string();
  }
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    throw hw::UserError(path_, 0, 0, "is a directory; give a file name to write");
  const Target t = resolve(path_);
  target_ = t.file;
  if (t.stream) {
    // Appending, as a shell's `>>` does: a stream has no old content to replace, and a regular file
    // behind /dev/stdout may hold what others wrote before.
    errno = 0;
    out_.open(target_, std::ios::binary | std::ios::app);
    if (!out_)
      throw hw::UserError(path_, 0, 0, std::string("cannot write: ") + (errno ? std::strerror(errno) : "open failed"));
    return;
  }
  std::vector<char> name(target_.begin(), target_.end());
  const std::string suffix = ".tmp.XXXXXX";
  name.insert(name.end(), suffix.begin(), suffix.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) throw hw::UserError(path_, 0, 0, std::string("cannot write: ") + std::strerror(errno));
  ::fchmod(fd, new_file_mode(target_));  // mkstemp creates 0600
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
  if (!temp_.empty()) std::remove(temp_.c_str());
}

void AtomicFile::finish_writing() {
  if (written_) return;
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail())
    throw hw::UserError(path_, 0, 0,
                        temp_.empty() ? "writing failed" : "writing failed (disk full?); the file was left unchanged");
  written_ = true;
}

void AtomicFile::commit() {
  finish_writing();
  if (!temp_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw hw::UserError(path_, 0, 0, std::string("cannot replace the file: ") + std::strerror(errno));
  committed_ = true;
}

}  // namespace cs::reports
