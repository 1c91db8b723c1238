// Stand-in for NVRTC's nvrtc.h, for bench/fix_regression.py only: this machine's CUDA toolkit
// ships no NVRTC, and TransformerEngine's common/util/logging.h includes it for its
// NVTE_CHECK_NVRTC macro. Declarations only, spelled as NVRTC's header spells them.
#pragma once
#include <stddef.h>

typedef enum { NVRTC_SUCCESS = 0 } nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;
#ifdef __cplusplus
extern "C" {
#endif
const char* nvrtcGetErrorString(nvrtcResult result);
#ifdef __cplusplus
}
#endif
