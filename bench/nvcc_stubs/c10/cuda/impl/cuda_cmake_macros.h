#pragma once
// Stand-in for the header torch's CMake generates (see ../../../README.md).
#define C10_CUDA_BUILD_SHARED_LIBS
