/* The DLPack exchange structs the bridge reads and writes, as the DLPack
 * specification fixes them (the unversioned "dltensor" capsule, whose
 * layout every producer since DLPack 0.6 shares: torch, numpy, CuPy,
 * JAX). Only what the bridge uses: a tensor's memory, device, type and
 * shape. https://dmlc.github.io/dlpack/latest/c_api.html */
#ifndef EG_PY_DLPACK_ABI_H
#define EG_PY_DLPACK_ABI_H

#include <stdint.h>

/* DLDeviceType values */
#define EG_DL_CPU	   1
#define EG_DL_CUDA	   2
#define EG_DL_CUDA_HOST	   3
#define EG_DL_CUDA_MANAGED 13
/* DLDataTypeCode values */
#define EG_DL_INT    0
#define EG_DL_UINT   1
#define EG_DL_FLOAT  2
#define EG_DL_BFLOAT 4

typedef struct eg_dl_device {
	int32_t device_type;
	int32_t device_id;
} eg_dl_device_t;

typedef struct eg_dl_dtype {
	uint8_t code, bits;
	uint16_t lanes;
} eg_dl_dtype_t;

typedef struct eg_dl_tensor {
	void *data;
	eg_dl_device_t device;
	int32_t ndim;
	eg_dl_dtype_t dtype;
	int64_t *shape;
	int64_t *strides; /* in elements; NULL: C-contiguous */
	uint64_t byte_offset;
} eg_dl_tensor_t;

typedef struct eg_dl_managed {
	eg_dl_tensor_t dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct eg_dl_managed *self);
} eg_dl_managed_t;

#define EG_DL_CAPSULE	   "dltensor"
#define EG_DL_CAPSULE_USED "used_dltensor"

#endif
