/* A loaded plugin as an ordinary engine: eg_engine_ops_t over one
 * instance per case. Multi-process suites (L2, benches) run the instance
 * in the rank's own process: the launcher already turns a crash or a hang
 * into "rank N killed by signal" or a deadline. In-process suites (L1,
 * world 1) run it in a forked child whose every call has a deadline
 * (plugin_fork.c), so a crash or a hang ends the case, not the run;
 * EPGATE_PLUGIN_FORK=0 keeps it in process (for a debugger). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/sized.h"
#include "plugin_int.h"

typedef struct eg__pe {
	eg_plug_t *pl;
	eg_plug_run_t *run;
	eg_plug_proxy_t *proxy;
} eg__pe_t;

static int eg__fork_wanted(void)
{
	const char *s = getenv("EPGATE_PLUGIN_FORK");

	return !s || strcmp(s, "0") != 0;
}

static int eg__pe_open(eg__pe_t *e, const eg_workload_t *w,
		       const eg_engine_ctx_t *ctx, char *err, size_t len)
{
	if (ctx->n_ranks != 1 || (!ctx->world && w->world != 1)) {
		snprintf(err, len,
			 "plugin %s runs one rank per process: in-process "
			 "(L1) only at world 1, this workload has world %u "
			 "(use --world=1, or L2)",
			 e->pl->p->name ? e->pl->p->name : e->pl->path,
			 w->world);
		return EG_ENOSYS;
	}
	if (!ctx->world && eg__fork_wanted())
		return eg_plug_proxy_create(
		    &e->proxy, e->pl, w,
		    EG_HAS(ctx, eg_engine_ctx_t, flags) ? ctx->flags : 0, err,
		    len);
	return eg_plug_run_create(&e->run, e->pl, w, ctx, err, len);
}

static int eg__pe_create(int slot, const eg_workload_t *w,
			 const eg_engine_ctx_t *ctx, void **state)
{
	eg__pe_t *e = calloc(1, sizeof(*e));
	eg_plug_t *pl = eg_plug_slot(slot);
	int rc;

	*state = NULL;
	if (!e)
		return EG_ENOMEM;
	e->pl = pl;
	pl->create_err[0] = '\0';
	rc = eg__pe_open(e, w, ctx, pl->create_err, sizeof(pl->create_err));
	if (rc < 0) {
		if (ctx->world) {
			/* said where it happens, a skip's reason too: the
			 * rank's log */
			fprintf(stderr, "epgate: rank %u: %s: create: %s%s\n",
				ctx->first_rank, pl->spec,
				rc == EG_ENOSYS ? "not supported: " : "",
				pl->create_err);
			fflush(stderr);
		}
		free(e);
		return rc;
	}
	*state = e;
	return EG_OK;
}

/* A failure said where it happens (multi-process: the rank's log; the
 * forked child's is reported by the suite). */
static void eg__pe_say(const eg__pe_t *e)
{
	const char *m = e->run ? eg_plug_run_error(e->run) : NULL;

	if (m && *m) {
		fprintf(stderr, "epgate: rank %u: %s\n", e->run->me, m);
		fflush(stderr);
	}
}

static int eg__pe_dispatch(void *state, const eg_rank_input_t *in,
			   eg_recv_t *out)
{
	eg__pe_t *e = state;
	int rc = e->proxy ? eg_plug_proxy_dispatch(e->proxy, in, out)
			  : eg_plug_run_dispatch(e->run, in, out);

	if (rc < 0)
		eg__pe_say(e);
	return rc;
}

/* The mapping of the last dispatch is kept inside; its findings in recv
 * give way to what this combine found in the buffers it handed the
 * plugin (the verified step adds them to the combine's verdict). */
static int eg__pe_combine(void *state, const eg_recv_t *recv,
			  const void *const *y, void *const *out)
{
	eg__pe_t *e = state;
	eg_verdict_t *f = recv->findings;
	int rc;

	if (f)
		eg_verdict_init(f);
	rc = e->proxy ? eg_plug_proxy_combine(e->proxy, y[0], out[0], f)
		      : eg_plug_run_combine(e->run, y[0], out[0]);
	if (rc < 0)
		eg__pe_say(e);
	else if (f && e->run)
		*f = *eg_plug_run_found(e->run);
	return rc;
}

static void eg__pe_destroy(void *state)
{
	eg__pe_t *e = state;

	if (!e)
		return;
	eg_plug_proxy_destroy(e->proxy); /* both take NULL */
	eg_plug_run_destroy(e->run);
	free(e);
}

static int eg__pe_phases(void *state, eg_engine_phase_t *p, size_t max)
{
	eg__pe_t *e = state;

	return e && e->run ? eg_plug_run_phases(e->run, p, max) : 0;
}

static int eg__pe_timing(void *state, eg_timing_sum_t *t, int reset)
{
	eg__pe_t *e = state;

	return e && e->run ? eg_plug_run_timing(e->run, t, reset) : EG_ENOSYS;
}

static const char *eg__pe_error(void *state)
{
	eg__pe_t *e = state;

	if (!e)
		return NULL;
	return e->proxy ? eg_plug_proxy_error(e->proxy)
			: eg_plug_run_error(e->run);
}

/* create() gets no ops pointer: one trampoline per registry slot,
 * eg__create_G_I for slot 4 G + I. */
#define EG__TRAMPOLINE(g, i)                                                   \
	static int eg__create_##g##_##i(                                       \
	    const eg_workload_t *w, const eg_engine_ctx_t *ctx, void **state)  \
	{                                                                      \
		return eg__pe_create(4 * (g) + (i), w, ctx, state);            \
	}
#define EG__TRAMPOLINES(g)                                                     \
	EG__TRAMPOLINE(g, 0)                                                   \
	EG__TRAMPOLINE(g, 1) EG__TRAMPOLINE(g, 2) EG__TRAMPOLINE(g, 3)
#define EG__CREATES(g)                                                         \
	eg__create_##g##_0, eg__create_##g##_1, eg__create_##g##_2,            \
	    eg__create_##g##_3
EG__TRAMPOLINES(0)
EG__TRAMPOLINES(1)
EG__TRAMPOLINES(2)
EG__TRAMPOLINES(3)
EG__TRAMPOLINES(4)
EG__TRAMPOLINES(5)
EG__TRAMPOLINES(6)
EG__TRAMPOLINES(7)

static int (*const eg__creates[EG_PLUG_SLOTS])(const eg_workload_t *,
					       const eg_engine_ctx_t *,
					       void **) = {
    EG__CREATES(0), EG__CREATES(1), EG__CREATES(2), EG__CREATES(3),
    EG__CREATES(4), EG__CREATES(5), EG__CREATES(6), EG__CREATES(7),
};
_Static_assert(EG_PLUG_SLOTS == 8 * 4, /* EG__CREATES(0..7) */
	       "a trampoline per slot (EG_PLUG_SLOTS)");

void eg_plug_engine_init(eg_plug_t *pl, int slot)
{
	uint32_t canon =
	    pl->order == EG_PLUGIN_ORDER_CANONICAL ? EG_ENGINE_CANONICAL_ORDER
	    : pl->order == EG_PLUGIN_ORDER_FIXED   ? EG_ENGINE_FIXED_ORDER
						   : 0;

	pl->ops = (eg_engine_ops_t){
	    .size = sizeof(eg_engine_ops_t),
	    .name = pl->spec,
	    .create = eg__creates[slot],
	    .dispatch = eg__pe_dispatch,
	    .combine = eg__pe_combine,
	    .destroy = eg__pe_destroy,
	    .flags = EG_ENGINE_MULTI_PROCESS | EG_ENGINE_WORLD1 | canon,
	    /* the bytes of the measurements (docs/metrics.md): whatever the
	     * native layout, a plugin must move one row per (token,
	     * destination rank holding one of its experts) */
	    .dispatch_rows = EG_ROWS_PER_RANK,
	    .phases = eg__pe_phases,
	    .error = eg__pe_error,
	    .combine_bound = pl->caps.order_bound,
	    .timing = eg__pe_timing,
	};
}

const char *eg_plug_create_error(const eg_engine_ops_t *ops)
{
	for (int i = 0; i < EG_PLUG_SLOTS; i++) {
		eg_plug_t *pl = eg_plug_slot(i);

		if (pl && &pl->ops == ops)
			return pl->create_err[0] ? pl->create_err : NULL;
	}
	return NULL;
}
