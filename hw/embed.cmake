# Writes OUT: a C++ source defining cs::hw::embedded_catalog_files() over the files in FILES
# (a |-separated list of paths relative to ROOT). Run at build time so edits to the YAML rebuild.
set(body "")
string(REPLACE "|" ";" FILES "${FILES}")
foreach(rel IN LISTS FILES)
  file(READ "${ROOT}/${rel}" text)
  string(APPEND body "    {\"${rel}\", R\"clustersim_yaml(${text})clustersim_yaml\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from the catalog YAML files; do not edit.\n#include \"hw/embedded_catalog.h\"\n\nnamespace cs::hw {\n\nconst std::vector<EmbeddedFile>& embedded_catalog_files() {\n  static const std::vector<EmbeddedFile> files = {\n${body}  };\n  return files;\n}\n\n}  // namespace cs::hw\n")
file(RENAME "${OUT}.tmp" "${OUT}")
