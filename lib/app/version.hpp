#pragma once
/// @file
/// Version of the datadyn toolchain. DATADYN_VERSION comes from CMake's project() call as a
/// compile definition (not a generated header, so build directories share ccache entries).

namespace datadyn {
inline constexpr const char* kVersion = DATADYN_VERSION;
}  // namespace datadyn
