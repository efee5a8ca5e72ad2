// datadyn-client-cache PATH [FRAMES [SEAMS_PATH [CORE_PATH [REFERENCE_PATH]]]]: writes the
// closed-form test cache
// of tests/support/export_caches.hpp, the input of the client tests (the Python scripts recompute
// its positions from the same formulas), with SEAMS_PATH the sheet with face-varying texture
// coordinates and a seam (write_seam_cache, shift 1), and with CORE_PATH the cube of tetrahedra
// around an interior vertex (write_core_cache), and with REFERENCE_PATH the cloth as a DCC tool's
// OBJ would hold it, for mesh-export's match.file (write_cloth_reference).

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "support/export_caches.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: datadyn-client-cache PATH [FRAMES [SEAMS_PATH [CORE_PATH "
                 "[REFERENCE_PATH]]]]\n");
    return 2;
  }
  try {
    const int frames = argc > 2 ? std::atoi(argv[2]) : 6;
    datadyn::test::write_export_cache(argv[1], frames);
    if (argc > 3) datadyn::test::write_seam_cache(argv[3], 1.0f);
    if (argc > 4) datadyn::test::write_core_cache(argv[4], frames);
    if (argc > 5) datadyn::test::write_cloth_reference(argv[5]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "datadyn-client-cache: %s\n", e.what());
    return 1;
  }
  return 0;
}
