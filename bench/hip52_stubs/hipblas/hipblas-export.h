#pragma once
// Stand-in for the header hipBLAS's CMake generates (generate_export_header, hipBLAS rocm-5.2.3
// library/src/CMakeLists.txt); a compile-only benchmark needs only the attribute.
#define HIPBLAS_EXPORT __attribute__((visibility("default")))
#define HIPBLAS_NO_EXPORT __attribute__((visibility("hidden")))
#define HIPBLAS_DEPRECATED __attribute__((__deprecated__))
