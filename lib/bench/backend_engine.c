/* The engine measurement backend (lib/bench/backend_engine.h): setup
 * opens the transport and a verified step and generates the input; the
 * verification is one verified iteration of the step (dispatch and
 * combine against the dense reference, combine by eg_combine_checks); a
 * timed step is the step's unverified run, timed by the memory space
 * (monotonic clock on the host, events on the stream for cuda). Payload
 * bytes are counted from the routing (docs/metrics.md), operations from
 * the transport's counters. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/sized.h"
#include "epgate/step.h"
#include "lib/bench/backend_engine.h"

typedef struct eg__eb {
	const eg_engine_backend_t *kind;
	const eg_xport_ops_t *x;
	void *xs;
	eg_world_t world;
	eg_boot_t *boot;
	eg_workload_t w;
	eg_step_t *st;
	eg_bench_bytes_t bytes; /* this rank, one step */
	uint64_t steps;		/* since counters_reset */
	eg_xport_stats_t s0;
	/* since counters_reset: dispatch wire bytes, the engine's phases */
	uint64_t wire_dispatch;
	uint32_t n_phases;
	eg_bench_phase_t phase[EG_BENCH_PHASES_MAX];
} eg__eb_t;

void eg_engine_backend_teardown(void *state)
{
	eg__eb_t *f = state;

	if (!f)
		return;
	eg_step_close(f->st); /* the engine before its transport */
	if (f->xs)
		f->x->destroy(f->xs);
	eg_workload_fini(&f->w);
	free(f);
}

/* The engine's context flags: a measurement, and its phases timed when
 * the command asked. */
static uint32_t eg__eb_flags(const eg_bench_setup_t *s)
{
	return EG_ENGINE_CTX_BENCH |
	       (EG_HAS(s, eg_bench_setup_t, phases) && s->phases
		    ? EG_ENGINE_CTX_PHASES
		    : 0);
}

/* The step on this rank; err says why not. */
static int eg__eb_step_open(eg__eb_t *f, const eg_bench_setup_t *s,
			    const eg_engine_ops_t *ops, void *stream, char *err,
			    size_t errlen)
{
	eg_step_opts_t so = {.size = sizeof(so),
			     .w = &f->w,
			     .engine = ops,
			     .ctx = eg_step_rank_ctx(&f->world, f->x, f->xs,
						     f->boot, eg__eb_flags(s)),
			     .space = eg_space_find(f->kind->engines->space),
			     .stream = stream,
			     .count_wire = f->kind->count_wire};
	eg_rank_verdict_t v;
	int rc;

	eg_rank_verdict_init(&v);
	if (!so.space) {
		snprintf(err, errlen, "%s: no %s memory in this build",
			 f->kind->name, f->kind->engines->space);
		return EG_ENOSYS;
	}
	rc = eg_step_open(&f->st, &so, &v);
	if (rc < 0 && v.engine_err) {
		/* the plugin's own reason (an adapter's NotImplementedError:
		 * "DeepEP is not importable here: ...") */
		const char *why = eg_engine_error(ops, NULL);

		snprintf(err, errlen, "%s: engine %s: %s%s%s", f->kind->name,
			 s->engine, eg_strerror(rc), why && *why ? ": " : "",
			 why && *why ? why : "");
	} else if (rc < 0)
		snprintf(err, errlen, "%s: setup on rank %u: %s", f->kind->name,
			 f->world.rank, eg_strerror(rc));
	/* the input the timed steps run on */
	if (rc == EG_OK && (rc = eg_step_generate(f->st, f->w.iter)) < 0)
		snprintf(err, errlen, "%s: input on rank %u: %s", f->kind->name,
			 f->world.rank, eg_strerror(rc));
	return rc;
}

int eg_engine_backend_setup(const eg_engine_backend_t *kind,
			    const eg_world_t *world, eg_boot_t *boot,
			    const eg_bench_setup_t *s, const eg_workload_t *w,
			    void **state, char *err, size_t errlen)
{
	const eg_engine_ops_t *ops;
	void *stream = NULL;
	eg__eb_t *f;
	int rc;

	*state = NULL;
	if (s->size < sizeof(*s) || w->world != world->size) {
		snprintf(err, errlen,
			 "%s: the workload's world %u is not the job's %u",
			 kind->name, w->world, world->size);
		return EG_EINVAL;
	}
	ops = eg_step_engine(kind->engines, s->engine);
	if (!ops && !strncmp(s->engine, "plugin:", 7)) {
		char why[1024];

		/* a plugin (or its adapter) absent here: its points are
		 * skips that say why, the others run (docs/profiles.md) */
		if (!eg_engine_lookup(s->engine, why, sizeof(why)))
			return eg_err_set(err, errlen, EG_ENOSYS,
					  "%s: not runnable here: %s",
					  kind->name, why);
	}
	if (!ops) {
		snprintf(err, errlen,
			 "%s: \"%s\" is not a multi-process engine (%s)",
			 kind->name, s->engine, kind->engines->names);
		return EG_EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return EG_ENOMEM;
	f->kind = kind;
	f->world = *world;
	f->boot = boot;
	if ((rc = eg_workload_copy(&f->w, w)) < 0) {
		snprintf(err, errlen, "%s: %s", kind->name, eg_strerror(rc));
		goto fail;
	}
	rc = kind->open(world, boot, s, &f->x, &f->xs, &stream, err, errlen);
	if (rc < 0) {
		f->xs = NULL;
		goto fail;
	}
	rc = eg_bench_rank_bytes_rule(&f->w, eg_engine_rows(ops), world->rank,
				      world->ranks_per_node, &f->bytes);
	if (rc < 0 && rc != EG_ENOSYS) {
		snprintf(err, errlen, "%s: bytes on rank %u: %s", kind->name,
			 world->rank, eg_strerror(rc));
		goto fail;
	}
	if ((rc = eg__eb_step_open(f, s, ops, stream, err, errlen)) < 0)
		goto fail;
	*state = f;
	return EG_OK;
fail:
	eg_engine_backend_teardown(f);
	return rc;
}

int eg_engine_backend_verify(void *state, char *err, size_t errlen)
{
	eg__eb_t *f = state;
	uint32_t r = f->world.rank;
	const char *xe = NULL;
	eg_rank_verdict_t v;

	const char *rp = "";

	eg_rank_verdict_init(&v);
	/* and at the replay boundary the first replays, on new data */
	if (eg_step_verify(f->st, f->w.iter, &v) == EG_OK) {
		rp = " (a replay of the call captured after the first, "
		     "EPGATE_BOUNDARY=replay)";
		eg_step_verify_replays(f->st, f->w.iter, &v);
	}
	if (v.harness_err) {
		snprintf(err, errlen, "rank %u: verification (%s): %s%s", r,
			 v.stage, eg_strerror(v.harness_err), rp);
		return v.harness_err;
	}
	if (v.engine_err) {
		xe = f->x->error ? f->x->error(f->xs) : NULL;
		snprintf(err, errlen, "rank %u: %s failed: %s%s", r, v.stage,
			 xe && *xe ? xe : eg_strerror(v.engine_err), rp);
		return v.engine_err;
	}
	if (eg_verdict_total_wrong(&v.v)) {
		snprintf(err, errlen,
			 "rank %u: %s: %llu wrong value(s) against the "
			 "reference (first in %s, iteration %u)%s",
			 r, v.stage,
			 (unsigned long long)eg_verdict_total_wrong(&v.v),
			 v.v.n_first ? eg_field_name(v.v.first[0].field) : "?",
			 v.iter, rp);
		return EG_EMISMATCH;
	}
	return EG_OK;
}

/* The engine's phases of the step just run, added to the sums. */
static void eg__eb_phases(eg__eb_t *f)
{
	eg_engine_phase_t p[EG_BENCH_PHASES_MAX];
	int n = eg_step_phases(f->st, p, EG_BENCH_PHASES_MAX);

	for (int i = 0; i < n; i++) {
		snprintf(f->phase[i].name, sizeof(f->phase[i].name), "%s",
			 p[i].name);
		f->phase[i].ms += p[i].ms;
	}
	if (n > 0)
		f->n_phases = (uint32_t)n;
}

int eg_engine_backend_step(void *state, eg_bench_times_t *t)
{
	eg__eb_t *f = state;
	int rc = eg_step_run(f->st, t);

	if (rc == EG_OK) {
		f->steps++;
		f->wire_dispatch += t->wire_dispatch;
		eg__eb_phases(f);
	}
	return rc;
}

void eg_engine_backend_reset(void *state)
{
	eg__eb_t *f = state;

	memset(&f->s0, 0, sizeof(f->s0));
	f->x->stats(f->xs, &f->s0);
	f->steps = 0;
	f->wire_dispatch = 0;
	f->n_phases = 0;
	memset(f->phase, 0, sizeof(f->phase));
	{
		eg_timing_sum_t t;

		eg_step_timing(f->st, &t, 1); /* the counts restart too */
	}
}

int eg_engine_backend_counters(void *state, eg_bench_counters_t *c)
{
	eg__eb_t *f = state;
	eg_xport_stats_t s;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&s, 0, sizeof(s));
	if ((rc = f->x->stats(f->xs, &s)) < 0)
		return rc;
	c->num_comms = s.num_comms;
	for (uint32_t k = 0; k < s.num_comms && k < 16; k++)
		c->ops_posted[k] = s.ops_posted[k] - f->s0.ops_posted[k];
	c->bytes_so = f->steps * f->bytes.disp_so;
	c->bytes_su = f->steps * f->bytes.disp_su;
	c->wire_dispatch = f->wire_dispatch;
	c->n_phases = f->n_phases;
	memcpy(c->phase, f->phase, sizeof(c->phase));
	eg_step_timing(f->st, &c->timing, 0);
	f->kind->describe(f->x, f->xs, c);
	return EG_OK;
}
