// Writes a file atomically: everything goes to a temporary file beside the target, which is
// renamed over the target on commit(). Without commit (an error, an exception), the temporary is
// removed and the target is untouched: nothing is ever half-written.
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
  // Flushes, closes and renames into place. Throws hw::UserError on a write failure.
  void commit();

 private:
  std::string path_, temp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace cs::reports
