// Writes a file atomically: everything goes to a temporary file beside the target, which is
// renamed over the target on commit(). Without commit (an error, an exception), the temporary is
// removed and the target is untouched: nothing is ever half-written. A new file gets the usual
// permissions (0666 less the umask); a replaced file keeps its own.
// A symbolic link stays in place: the file it leads to (through any chain of links; a dangling
// link's target is created) is the one replaced. A target that is no regular file (a device such
// as /dev/null, a FIFO, a terminal, /dev/stdout) is a stream: it is written directly, without
// atomicity, since a stream cannot be replaced. A directory is refused.
#pragma once

#include <fstream>
#include <string>

namespace cs::reports {

class AtomicFile {
 public:
  // Creates the temporary file (or opens the stream) at once, so an unwritable target fails before
  // any work is done. Throws hw::UserError when the target cannot be written.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes and closes; throws hw::UserError when the data could not all be written (disk full).
  // Call it on every output before committing any, so one failure leaves all targets unchanged.
  void finish_writing();
  // Renames into place (after finish_writing); a stream has nothing left to do. Throws
  // hw::UserError when the rename fails.
  void commit();

 private:
  std::string path_;    // as the user gave it (for messages)
  std::string target_;  // the file replaced: path_, or where its symbolic links lead
  std::string temp_;    // empty for a stream
  std::ofstream out_;
  bool committed_ = false;
  bool written_ = false;
};

}  // namespace cs::reports
