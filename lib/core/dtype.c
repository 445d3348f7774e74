/* Element types. The conversions delegate to include/epgate/gen_core.h so that
 * host and device share one definition of every bit. */
#include <string.h>

#include "epgate/dtype.h"
#include "epgate/gen_core.h"

size_t eg_dtype_size(eg_dtype_t t)
{
	switch (t) {
	case EG_DTYPE_BF16:
		return 2;
	case EG_DTYPE_FP32:
		return 4;
	case EG_DTYPE_FP8:
		return 1;
	}
	return 0;
}

eg_dtype_t eg_combine_dtype(eg_dtype_t t)
{
	return t == EG_DTYPE_FP8 ? EG_DTYPE_BF16 : t;
}

const char *eg_dtype_name(eg_dtype_t t)
{
	static const char *const name[] = {
	    [EG_DTYPE_BF16] = "bf16",
	    [EG_DTYPE_FP32] = "fp32",
	    [EG_DTYPE_FP8] = "fp8",
	};

	return (size_t)t < sizeof(name) / sizeof(name[0]) ? name[t] : "unknown";
}

unsigned eg_dtype_mantissa_bits(eg_dtype_t t)
{
	switch (t) {
	case EG_DTYPE_BF16:
		return 8;
	case EG_DTYPE_FP32:
		return 24;
	case EG_DTYPE_FP8:
		return 4;
	}
	return 0;
}

uint16_t eg_f32_to_bf16(float f)
{
	return eg_core_f32_to_bf16(f);
}

float eg_bf16_to_f32(uint16_t b)
{
	return eg_core_bf16_to_f32(b);
}

uint8_t eg_f32_to_e4m3(float f)
{
	return eg_core_f32_to_e4m3(f);
}

float eg_e4m3_to_f32(uint8_t b)
{
	return eg_core_e4m3_to_f32(b);
}

/* memcpy: buffers may be unaligned byte views of a larger message. */
uint64_t eg_load_bits(eg_dtype_t t, const void *buf, size_t i)
{
	const unsigned char *p = buf;
	uint32_t u32;
	uint16_t u16;

	switch (t) {
	case EG_DTYPE_BF16:
		memcpy(&u16, p + i * 2, 2);
		return u16;
	case EG_DTYPE_FP32:
		memcpy(&u32, p + i * 4, 4);
		return u32;
	case EG_DTYPE_FP8:
		return p[i];
	}
	return 0;
}

float eg_load_f32(eg_dtype_t t, const void *buf, size_t i)
{
	uint64_t b = eg_load_bits(t, buf, i);

	switch (t) {
	case EG_DTYPE_BF16:
		return eg_bf16_to_f32((uint16_t)b);
	case EG_DTYPE_FP32:
		return eg_u2f((uint32_t)b);
	case EG_DTYPE_FP8:
		return eg_e4m3_to_f32((uint8_t)b);
	}
	return 0.0f;
}

void eg_store_f32(eg_dtype_t t, void *buf, size_t i, float v)
{
	unsigned char *p = buf;
	uint16_t u16;

	switch (t) {
	case EG_DTYPE_BF16:
		u16 = eg_f32_to_bf16(v);
		memcpy(p + i * 2, &u16, 2);
		break;
	case EG_DTYPE_FP32:
		memcpy(p + i * 4, &v, 4);
		break;
	case EG_DTYPE_FP8:
		p[i] = eg_f32_to_e4m3(v);
		break;
	}
}

int eg_is_nonfinite(eg_dtype_t t, const void *buf, size_t i)
{
	uint64_t b = eg_load_bits(t, buf, i);

	switch (t) {
	case EG_DTYPE_BF16:
		return (b & 0x7f80u) == 0x7f80u;
	case EG_DTYPE_FP32:
		return (b & 0x7f800000u) == 0x7f800000u;
	case EG_DTYPE_FP8: /* e4m3 has no Inf; NaN is S.1111.111 */
		return (b & 0x7fu) == 0x7fu;
	}
	return 0;
}
