/* The "self" engine: W ranks simulated inside one process, written like a
 * real all-to-all (count, pack per destination, exchange, unpack) and
 * independently of the reference, so L1 exercises the whole chain. */
#include <stdlib.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/mem.h"

typedef struct eg__self {
	eg_workload_t w;
	uint32_t first, n;
	uint32_t *tokens; /* per rank, of the last dispatch (a step's) */
} eg__self_t;

/* One packed message from source s to destination d. */
typedef struct eg__msg {
	uint32_t rows;
	uint8_t *x;	/* rows * H * esz */
	float *scales;	/* rows * H/128 */
	int32_t *token; /* rows */
	int32_t *idx;	/* rows * K, local to d */
	float *wt;	/* rows * K */
} eg__msg_t;

static void eg__msg_free(eg__msg_t *m)
{
	EG_FREE(m->x, m->scales, m->token, m->idx, m->wt);
	memset(m, 0, sizeof(*m));
}

static void eg__self_destroy(void *state)
{
	eg__self_t *s = state;
	if (!s)
		return;
	eg_workload_fini(&s->w);
	free(s->tokens);
	free(s);
}

static int eg__self_create(const eg_workload_t *w, const eg_engine_ctx_t *ctx,
			   void **state)
{
	eg__self_t *s;

	/* a single process must hold every rank */
	if (ctx->first_rank != 0 || ctx->n_ranks != w->world)
		return EG_ENOSYS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return EG_ENOMEM;
	s->first = ctx->first_rank;
	s->n = ctx->n_ranks;
	if (eg_workload_copy(&s->w, w) < 0 ||
	    !(s->tokens = calloc(w->world, sizeof(uint32_t)))) {
		eg__self_destroy(s);
		return EG_ENOMEM;
	}
	*state = s;
	return EG_OK;
}

/* Pack source rank in's tokens for destination d. */
static int eg__pack(const eg_workload_t *w, const eg_rank_input_t *in,
		    uint32_t d, eg__msg_t *m)
{
	uint32_t K = w->topk, H = w->hidden, L = w->experts / w->world;
	size_t esz = eg_dtype_size(w->dtype), nb = H / EG_FP8_BLOCK;
	uint32_t lo = d * L, hi = lo + L;

	memset(m, 0, sizeof(*m));
	for (uint32_t t = 0; t < in->tokens; t++)
		for (uint32_t k = 0; k < K; k++) {
			int32_t e = in->topk_idx[(size_t)t * K + k];
			if (e >= (int32_t)lo && e < (int32_t)hi) {
				m->rows++;
				break;
			}
		}
	/* one spare row: a token's slots are written before we know it is
	 * ours */
	size_t r = (size_t)m->rows + 1;
	m->x = malloc(r * H * esz);
	m->scales = malloc(r * (nb ? nb : 1) * sizeof(float));
	m->token = malloc(r * sizeof(int32_t));
	m->idx = malloc(r * K * sizeof(int32_t));
	m->wt = malloc(r * K * sizeof(float));
	if (!m->x || !m->scales || !m->token || !m->idx || !m->wt) {
		eg__msg_free(m);
		return EG_ENOMEM;
	}
	uint32_t j = 0;
	for (uint32_t t = 0; t < in->tokens; t++) {
		const int32_t *ti = in->topk_idx + (size_t)t * K;
		int mine = 0;
		for (uint32_t k = 0; k < K; k++) {
			int local = ti[k] >= (int32_t)lo && ti[k] < (int32_t)hi;
			m->idx[(size_t)j * K + k] =
			    local ? ti[k] - (int32_t)lo : -1;
			m->wt[(size_t)j * K + k] =
			    local ? in->topk_w[(size_t)t * K + k] : 0.0f;
			mine |= local;
		}
		if (!mine)
			continue; /* slot data is overwritten by the next */
		memcpy(m->x + (size_t)j * H * esz,
		       (const uint8_t *)in->x + (size_t)t * H * esz, H * esz);
		if (w->dtype == EG_DTYPE_FP8)
			memcpy(m->scales + (size_t)j * nb,
			       in->scales + (size_t)t * nb, nb * sizeof(float));
		m->token[j] = (int32_t)t;
		j++;
	}
	return EG_OK;
}

static int eg__self_dispatch(void *state, const eg_rank_input_t *in,
			     eg_recv_t *out)
{
	eg__self_t *s = state;
	const eg_workload_t *w = &s->w;
	uint32_t W = w->world, K = w->topk, H = w->hidden;
	uint32_t L = w->experts / W;
	size_t esz = eg_dtype_size(w->dtype), nb = H / EG_FP8_BLOCK;
	eg__msg_t *msg = calloc((size_t)W * W, sizeof(*msg));
	int rc = EG_OK;

	if (!msg)
		return EG_ENOMEM;
	for (uint32_t r = 0; r < W; r++)
		s->tokens[r] = in[r].tokens;
	for (uint32_t src = 0; src < W && rc == EG_OK; src++)
		for (uint32_t d = 0; d < W && rc == EG_OK; d++)
			rc = eg__pack(w, &in[src], d, &msg[src * W + d]);
	for (uint32_t d = 0; d < W && rc == EG_OK; d++) {
		eg_recv_t *r = &out[d];
		uint32_t off = 0;
		memset(r->expert_count, 0, L * sizeof(uint32_t));
		for (uint32_t src = 0; src < W; src++) {
			const eg__msg_t *m = &msg[src * W + d];
			r->rank_prefix[src] = off;
			if (off + m->rows > r->capacity) {
				rc = EG_ERANGE;
				break;
			}
			memcpy((uint8_t *)r->x + (size_t)off * H * esz, m->x,
			       (size_t)m->rows * H * esz);
			if (w->dtype == EG_DTYPE_FP8)
				memcpy(r->scales + (size_t)off * nb, m->scales,
				       (size_t)m->rows * nb * sizeof(float));
			memcpy(r->topk_idx + (size_t)off * K, m->idx,
			       (size_t)m->rows * K * sizeof(int32_t));
			memcpy(r->topk_w + (size_t)off * K, m->wt,
			       (size_t)m->rows * K * sizeof(float));
			for (uint32_t j = 0; j < m->rows; j++) {
				r->src_rank[off + j] = (int32_t)src;
				r->src_token[off + j] = m->token[j];
				for (uint32_t k = 0; k < K; k++)
					if (m->idx[(size_t)j * K + k] >= 0)
						r->expert_count
						    [m->idx[(size_t)j * K +
							    k]]++;
			}
			off += m->rows;
		}
		r->rank_prefix[W] = off;
		r->num_rows = off;
	}
	for (size_t i = 0; i < (size_t)W * W; i++)
		eg__msg_free(&msg[i]);
	free(msg);
	return rc;
}

static int eg__self_combine(void *state, const eg_recv_t *recv,
			    const void *const *y, void *const *out)
{
	eg__self_t *s = state;
	const eg_workload_t *w = &s->w;
	uint32_t W = w->world, H = w->hidden;
	eg_dtype_t ct = eg_combine_dtype(w->dtype);

	for (uint32_t src = 0; src < W; src++) {
		uint32_t T = s->tokens[src]; /* the last dispatch's */
		float *acc = calloc((size_t)(T ? T : 1) * H, sizeof(float));
		if (!acc)
			return EG_ENOMEM;
		/* reduce in destination order, as the contract says */
		for (uint32_t d = 0; d < W; d++) {
			const eg_recv_t *r = &recv[d];
			for (uint32_t j = r->rank_prefix[src];
			     j < r->rank_prefix[src + 1]; j++) {
				uint32_t t = (uint32_t)r->src_token[j];
				if (t >= T) {
					free(acc);
					return EG_ERANGE;
				}
				for (uint32_t h = 0; h < H; h++)
					acc[(size_t)t * H + h] += eg_load_f32(
					    ct, y[d], (size_t)j * H + h);
			}
		}
		for (size_t i = 0; i < (size_t)T * H; i++)
			eg_store_f32(ct, out[src], i, acc[i]);
		free(acc);
	}
	return EG_OK;
}

const eg_engine_ops_t eg_engine_self = {
    .size = sizeof(eg_engine_ops_t),
    .name = "self",
    .create = eg__self_create,
    .dispatch = eg__self_dispatch,
    .combine = eg__self_combine,
    .destroy = eg__self_destroy,
    .flags = EG_ENGINE_CANONICAL_ORDER,
    .dispatch_rows = EG_ROWS_PER_RANK,
};
