/* Element types and their bit-exact conversions (host side; the same
 * bit manipulations are in include/epgate/gen_core.h for device code). */
#ifndef EPGATE_DTYPE_H
#define EPGATE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#define EG_FP8_BLOCK	128    /* channels per fp8 scale */
#define EG_FP8_MAX	448.0f /* largest finite e4m3 */
#define EG_FP8_AMAX_MIN 1e-4f

typedef enum eg_dtype {
	EG_DTYPE_BF16 = 0,
	EG_DTYPE_FP32 = 1,
	EG_DTYPE_FP8 = 2, /* e4m3 payload, fp32 scale per 128 channels */
} eg_dtype_t;

/* Bytes of one element. */
size_t eg_dtype_size(eg_dtype_t t);
/* Type of expert outputs and combine results: fp8 combines in bf16 (as
 * DeepEP does), the others in themselves. */
eg_dtype_t eg_combine_dtype(eg_dtype_t t);
const char *eg_dtype_name(eg_dtype_t t);
/* Significand bits including the implicit one: bf16 8, fp32 24, fp8 4. */
unsigned eg_dtype_mantissa_bits(eg_dtype_t t);

/* Round-to-nearest-even conversions; NaN stays NaN, e4m3 saturates to
 * +-448 (satfinite, as CUDA's __nv_cvt_float_to_fp8 with __NV_SATFINITE). */
uint16_t eg_f32_to_bf16(float f);
float eg_bf16_to_f32(uint16_t b);
uint8_t eg_f32_to_e4m3(float f);
float eg_e4m3_to_f32(uint8_t b);

/* Load/store element i of a buffer of type t as fp32 (fp8 without its
 * scale). */
float eg_load_f32(eg_dtype_t t, const void *buf, size_t i);
void eg_store_f32(eg_dtype_t t, void *buf, size_t i, float v);
/* The raw bits of element i (for mismatch reports). */
uint64_t eg_load_bits(eg_dtype_t t, const void *buf, size_t i);
/* 1 when element i is NaN or Inf. */
int eg_is_nonfinite(eg_dtype_t t, const void *buf, size_t i);

#endif
