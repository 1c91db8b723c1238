// Stand-in for cuDNN's cudnn.h, for bench/fix_regression.py only: this machine has no cuDNN,
// and TransformerEngine's common/util/logging.h includes it for its NVTE_CHECK_CUDNN macro.
// Declarations only, spelled as cuDNN's cudnn_graph.h spells them; never linked.
#pragma once
#include <stddef.h>

typedef enum { CUDNN_STATUS_SUCCESS = 0 } cudnnStatus_t;
typedef struct cudnnContext* cudnnHandle_t;
#ifdef __cplusplus
extern "C" {
#endif
const char* cudnnGetErrorString(cudnnStatus_t status);
size_t cudnnGetVersion(void);
#ifdef __cplusplus
}
#endif
