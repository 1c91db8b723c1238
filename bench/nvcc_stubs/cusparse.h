#pragma once
// Stand-in: the handle type torch's CUDAContextLight.h names (see README.md).
typedef struct cusparseContext *cusparseHandle_t;
