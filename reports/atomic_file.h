// Writes a file atomically: everything goes to a temporary file beside the target, which is
// renamed over the target on commit(). Without commit (an error, an exception), the temporary is
// removed and the target is untouched: nothing is ever half-written. A new file gets the usual
// permissions (0666 less the umask); a replaced file keeps its own.
#pragma once

#include <fstream>
#include <string>

namespace cs::reports {

class AtomicFile {
 public:
  // Creates the temporary file at once, so an unwritable target fails before any work is done.
  // Throws hw::UserError when the directory cannot be written.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes and closes; throws hw::UserError when the data could not all be written (disk full).
  // Call it on every output before committing any, so one failure leaves all targets unchanged.
  void finish_writing();
  // Renames into place (after finish_writing). Throws hw::UserError when the rename fails.
  void commit();

 private:
  std::string path_, temp_;
  std::ofstream out_;
  bool committed_ = false;
  bool written_ = false;
};

}  // namespace cs::reports
