#pragma once
// Stand-in for hipBLAS's configured hipblas-version.h.in (hipBLAS rocm-5.2.3 is 0.51.0).
#define hipblasVersionMajor 0
#define hipblaseVersionMinor 51
#define hipblasVersionMinor 51
#define hipblasVersionPatch 0
#define hipblasVersionTweak 0
