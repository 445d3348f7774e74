/* The generation recipe, shared bit for bit by the host twin (C11) and the
 * CUDA kernels. Only integer ops and correctly rounded IEEE +,-,*,/ are
 * used (no libm, no FMA: built with -ffp-contract=off / --fmad=false), so
 * host and device produce identical bits.
 *
 * Philox4x32-10 counter = {a, b, rank, stream << 24 | iter'}, key = seed.
 * iter' is the iteration for token values and 0 for routing, so a new
 * iteration changes the data but keeps the routing (cached-handle reuse);
 * a new seed changes everything. See docs/semantics.md. */
#ifndef EPGATE_GEN_CORE_H
#define EPGATE_GEN_CORE_H

#include <stdint.h>
#include <Random123/philox.h>

#ifdef __CUDACC__
#define EG_HD __host__ __device__ __forceinline__
#else
#define EG_HD static inline
#endif

enum {
	EG_STREAM_VALUE = 1,
	EG_STREAM_ROUTE = 2,
	EG_STREAM_WEIGHT = 3,
	EG_STREAM_MASK = 4,
	EG_STREAM_DUP = 5,
	EG_STREAM_NONFINITE = 6,
};

/* Values mirror eg_dtype_t, eg_data_mode_t, eg_routing_t. */
enum { EG_GEN_BF16 = 0, EG_GEN_FP32 = 1, EG_GEN_FP8 = 2 };
enum { EG_GEN_EXACT = 0, EG_GEN_RANDOM = 1 };
enum {
	EG_GEN_UNIFORM = 0,
	EG_GEN_ZIPF = 1,
	EG_GEN_HOT_EXPERT = 2,
	EG_GEN_HOT_RANK = 3
};

typedef struct eg_gen_params {
	uint32_t key0, key1; /* seed, low and high words */
	uint32_t iter;
	uint32_t world, experts, local_experts, topk, hidden;
	uint32_t dtype, data, routing;
	uint32_t hot_target;
	uint64_t hot_threshold;	 /* hot when draw < threshold (2^32 = always) */
	uint64_t mask_threshold; /* masked when draw < threshold */
	uint64_t dup_threshold;	 /* a duplicate when draw < threshold */
	int32_t value_bound;	 /* exact: x in [-value_bound, value_bound] */
	int32_t bias_bound;	 /* exact: b_e in [-bias_bound, bias_bound] */
	const uint32_t *expert_weight; /* E integer weights, NULL = all 1 */
	/* nonfinite=input:P: a token carries a non-finite input element
	 * when draw < threshold (0: never); nonfinite=expert:E: expert
	 * nf_expert - 1's output is +Inf (0: none) */
	uint64_t nf_threshold;
	uint32_t nf_expert;
} eg_gen_params_t;

EG_HD philox4x32_ctr_t eg_philox(const eg_gen_params_t *p, uint32_t a,
				 uint32_t b, uint32_t rank, uint32_t stream)
{
	philox4x32_ctr_t c;
	philox4x32_key_t k;
	uint32_t it = stream == EG_STREAM_VALUE || stream == EG_STREAM_NONFINITE
			  ? (p->iter & 0xffffffu)
			  : 0u;
	c.v[0] = a;
	c.v[1] = b;
	c.v[2] = rank;
	c.v[3] = (stream << 24) | it;
	k.v[0] = p->key0;
	k.v[1] = p->key1;
	return philox4x32(c, k);
}

/* A float and its bits (host and device, C and C++). */
typedef union eg_f32_bits {
	float f;
	uint32_t u;
} eg_f32_bits_t;

EG_HD uint32_t eg_f2u(float f)
{
	eg_f32_bits_t c;
	c.f = f;
	return c.u;
}
EG_HD float eg_u2f(uint32_t u)
{
	eg_f32_bits_t c;
	c.u = u;
	return c.f;
}

/* [0,1) with 24 random bits: exact in fp32. */
EG_HD float eg_u01(uint32_t u)
{
	return (float)(u >> 8) * (1.0f / 16777216.0f);
}

/* nonfinite=input:P, stream 6 (with the iteration, so the tokens that
 * carry one change from iteration to iteration): token t of rank carries
 * one with probability P, in column v[1] mod H, NaN, +Inf or -Inf by
 * v[2] mod 3. Returns 1 and the value there, else 0. */
EG_HD int eg_gen_nonfinite(const eg_gen_params_t *p, uint32_t rank, uint32_t t,
			   uint32_t h, float *v)
{
	if (!p->nf_threshold)
		return 0;
	philox4x32_ctr_t r = eg_philox(p, t, 0, rank, EG_STREAM_NONFINITE);
	if ((uint64_t)r.v[0] >= p->nf_threshold || r.v[1] % p->hidden != h)
		return 0;
	uint32_t kind = r.v[2] % 3u;
	*v = kind == 0	 ? eg_u2f(0x7fc00000u)	/* quiet NaN */
	     : kind == 1 ? eg_u2f(0x7f800000u)	/* +Inf */
			 : eg_u2f(0xff800000u); /* -Inf */
	return 1;
}

/* exact data: column j (0-3) of a group of four from its one Philox draw
 * r (columns 4q .. 4q+3 share the draw of counter q = h >> 2) */
EG_HD float eg_gen_exact(const eg_gen_params_t *p, philox4x32_ctr_t r,
			 uint32_t j)
{
	uint32_t span = 2u * (uint32_t)p->value_bound + 1u;
	return (float)((int32_t)(r.v[j] % span) - p->value_bound);
}

/* fp32 value of element (token t, column h) of rank before any cast. */
EG_HD float eg_gen_value(const eg_gen_params_t *p, uint32_t rank, uint32_t t,
			 uint32_t h)
{
	float nf;

	if (eg_gen_nonfinite(p, rank, t, h, &nf))
		return nf;
	if (p->data == EG_GEN_EXACT)
		return eg_gen_exact(
		    p, eg_philox(p, t, h >> 2, rank, EG_STREAM_VALUE), h & 3u);
	/* Irwin-Hall(4), rescaled to unit variance: approx. normal in
	 * [-3.46, 3.46] without transcendental functions. */
	philox4x32_ctr_t r = eg_philox(p, t, h, rank, EG_STREAM_VALUE);
	float s = eg_u01(r.v[0]);
	s = s + eg_u01(r.v[1]);
	s = s + eg_u01(r.v[2]);
	s = s + eg_u01(r.v[3]);
	return (s - 2.0f) * 1.7320508f;
}

/* ---- bit conversions (RNE) ---- */
EG_HD uint16_t eg_core_f32_to_bf16(float f)
{
	uint32_t u = eg_f2u(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign, quiet */
		return (uint16_t)((u >> 16) | 0x0040u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

EG_HD float eg_core_bf16_to_f32(uint16_t b)
{
	return eg_u2f((uint32_t)b << 16);
}

/* fp32 -> e4m3 (bias 7, no Inf, NaN = S.1111.111), RNE, saturating to
 * +-448; NaN -> 0x7f. */
EG_HD uint8_t eg_core_f32_to_e4m3(float f)
{
	uint32_t u = eg_f2u(f);
	uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return 0x7f;
	if (a >= 0x43e00000u) /* >= 448 (and Inf): saturate */
		return (uint8_t)(sign | 0x7e);
	int32_t e = (int32_t)(a >> 23) - 127; /* unbiased exponent */
	if (e < -6) {
		/* subnormal range: value = m * 2^-9, m in [0, 8] */
		/* scale a by 2^9 exactly then round to integer, RNE */
		float v = eg_u2f(a) * 512.0f;
		uint32_t vi = (uint32_t)v; /* trunc */
		float rem = v - (float)vi;
		if (rem > 0.5f || (rem == 0.5f && (vi & 1u)))
			vi++;
		return (uint8_t)(sign |
				 vi); /* vi == 8 is the smallest normal */
	}
	uint32_t mant = a & 0x7fffffu;
	uint32_t q = mant >> 20;	 /* 3 bits */
	uint32_t rest = mant & 0xfffffu; /* 20 bits dropped */
	uint32_t half = 0x80000u;
	uint32_t bits = ((uint32_t)(e + 7) << 3) | q;
	if (rest > half || (rest == half && (q & 1u)))
		bits++;
	if (bits > 0x7eu)
		bits = 0x7eu;
	return (uint8_t)(sign | bits);
}

EG_HD float eg_core_e4m3_to_f32(uint8_t b)
{
	uint32_t sign = (uint32_t)(b & 0x80u) << 24;
	uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
	if (e == 0xfu && m == 7u)
		return eg_u2f(sign | 0x7fc00000u);
	if (e == 0) /* subnormal: m * 2^-9 */
		return eg_u2f(sign | eg_f2u((float)m * (1.0f / 512.0f)));
	return eg_u2f(sign | ((e - 7u + 127u) << 23) | (m << 20));
}

/* fp8 scale of one 128-channel block from its amax (DeepEP's recipe:
 * max(amax, 1e-4) / 448; in exact mode rounded up to a power of two so
 * that small integers quantize exactly). */
EG_HD float eg_fp8_scale(const eg_gen_params_t *p, float amax)
{
	float a = amax < 1e-4f ? 1e-4f : amax;
	/* an Inf (nonfinite=input): e4m3 has none, so the block's scale
	 * carries it (DeepEP's amax / 448 gives the same) */
	if (p->data != EG_GEN_EXACT || eg_f2u(a) == 0x7f800000u)
		return a / 448.0f;
	float s = 1.0f;
	while (s * 448.0f < a)
		s = s * 2.0f;
	while (s * 0.5f * 448.0f >= a)
		s = s * 0.5f;
	return s;
}

/* ---- routing ---- */
EG_HD uint32_t eg_expert_w(const eg_gen_params_t *p, uint32_t e)
{
	return p->expert_weight ? p->expert_weight[e] : 1u;
}

EG_HD int eg_chosen(const int32_t *idx, uint32_t n, uint32_t e)
{
	for (uint32_t i = 0; i < n; i++)
		if (idx[i] == (int32_t)e)
			return 1;
	return 0;
}

/* Slot k > 0 of a token repeats the expert of an earlier slot j (drawn
 * uniformly among 0..k-1) with the dup probability: duplicate expert ids
 * within one token, a bug class of libraries that dedupe. */
EG_HD void eg_gen_dups(const eg_gen_params_t *p, uint32_t rank, uint32_t t,
		       int32_t *idx)
{
	for (uint32_t k = 1; p->dup_threshold && k < p->topk; k++) {
		philox4x32_ctr_t d = eg_philox(p, t, k, rank, EG_STREAM_DUP);
		if ((uint64_t)d.v[0] < p->dup_threshold)
			idx[k] = idx[d.v[1] % k];
	}
}

/* Top-k of token t of rank: sequential sampling without replacement from
 * integer expert weights; slot 0 may be forced (hot expert), or the first
 * draws restricted to one rank's experts (hot rank). Then duplicates (if
 * asked for), masking and weights per slot. idx/w have topk entries. */
EG_HD void eg_gen_route(const eg_gen_params_t *p, uint32_t rank, uint32_t t,
			int32_t *idx, float *w)
{
	uint32_t K = p->topk, E = p->experts, L = p->local_experts;
	philox4x32_ctr_t r0 = eg_philox(p, t, 0, rank, EG_STREAM_ROUTE);
	int hot = (uint64_t)r0.v[2] < p->hot_threshold;
	uint32_t j = 0;
	if (hot && p->routing == EG_GEN_HOT_EXPERT)
		idx[j++] = (int32_t)p->hot_target;
	for (; j < K; j++) {
		int restrict_rank =
		    hot && p->routing == EG_GEN_HOT_RANK && j < L;
		uint32_t lo = restrict_rank ? p->hot_target * L : 0;
		uint32_t hi = restrict_rank ? lo + L : E;
		uint64_t total = 0;
		for (uint32_t e = lo; e < hi; e++)
			if (!eg_chosen(idx, j, e))
				total += eg_expert_w(p, e);
		philox4x32_ctr_t r =
		    j == 0 ? r0 : eg_philox(p, t, j, rank, EG_STREAM_ROUTE);
		uint64_t x = (((uint64_t)r.v[0] << 32) | r.v[1]) % total;
		uint32_t e = lo;
		for (; e < hi; e++) {
			if (eg_chosen(idx, j, e))
				continue;
			uint64_t we = eg_expert_w(p, e);
			if (x < we)
				break;
			x -= we;
		}
		idx[j] = (int32_t)e;
	}
	eg_gen_dups(p, rank, t, idx);
	for (uint32_t k = 0; k < K; k++) {
		uint32_t um =
		    eg_philox(p, t, k >> 2, rank, EG_STREAM_MASK).v[k & 3u];
		uint32_t uw =
		    eg_philox(p, t, k >> 2, rank, EG_STREAM_WEIGHT).v[k & 3u];
		if ((uint64_t)um < p->mask_threshold) {
			idx[k] = -1;
			w[k] = 0.0f;
		} else if (p->data == EG_GEN_EXACT) {
			uint32_t c = uw % 3u; /* 0.5, 1 or 2 */
			w[k] = c == 0 ? 0.5f : (c == 1 ? 1.0f : 2.0f);
		} else {
			w[k] = (float)((uw >> 8) + 1u) * (1.0f / 16777216.0f);
		}
	}
}

/* The test-defined expert function f_e(x) = x + b_e. */
EG_HD float eg_expert_bias(const eg_gen_params_t *p, uint32_t e)
{
	if (p->nf_expert && e == p->nf_expert - 1u) /* nonfinite=expert:E */
		return eg_u2f(0x7f800000u);
	if (p->data == EG_GEN_EXACT) {
		uint32_t span = 2u * (uint32_t)p->bias_bound + 1u;
		return (float)((int32_t)(((e * 2654435761u) >> 16) % span) -
			       p->bias_bound);
	}
	return (float)((int32_t)(e % 9u) - 4) * 0.25f;
}

#endif
