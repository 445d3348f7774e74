/* The "null" measurement backend: no transport and no engine.  Arm
 * "empty" is a step that does nothing (what the driver's clock reads and
 * calls cost); "work:US" is a busy loop calibrated to about US
 * microseconds on this core, "work:US>T:US2" the same but US2 at points of
 * more than T tokens (a slowdown confined to some points, for the A/B
 * gates' tests); "loop:N" is that loop with exactly N iterations (so two
 * runs do the same work); "sim:US" and "sim:US>T:US2" spin nothing and
 * report US microseconds with a 2% log-normal spread drawn per step, so
 * that the gates' own tests hold their verdicts under any load (a busy
 * loop on a shared 2-core machine measures the machine); a suffix "~P"
 * adds a launch's own level, drawn once per launch with a spread of P%
 * (a Student t with 3 degrees of freedom: a measured launch's change has
 * heavy tails, docs/gates.md), for the A/B gates' power.  `epgate bench
 * --overhead` times empty and work through the driver to measure the
 * harness's own overhead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/num.h"

typedef struct eg__null {
	uint64_t iterations; /* 0: empty */
	uint64_t steps;
	double sim_s; /* sim:US: the step's modeled seconds; 0 otherwise */
	double level; /* sim:US~P: this launch's factor; 1 otherwise */
	gsl_rng *rng; /* sim:US's spread */
} eg__null_t;

/* sim:US's seed: the arm, the point and this process (each launch is
 * one), so launches draw apart and two arms never share draws; with
 * EPGATE_SIM_SEED, that seed and the launch's pass (EPGATE_BENCH_PASS)
 * instead of the process, so that a job draws the same on every run. */
static unsigned long eg__sim_seed(const char *arm, const eg_workload_t *w)
{
	static unsigned long count;
	const char *seed = getenv("EPGATE_SIM_SEED"),
		   *pass = getenv("EPGATE_BENCH_PASS");
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (const char *c = arm; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	h = (h ^ w->tokens) * 1099511628211ull;
	if (seed && *seed) {
		h = (h ^ strtoull(seed, NULL, 10)) * 1099511628211ull;
		h = (h ^ (pass ? strtoull(pass, NULL, 10) : 0)) *
		    1099511628211ull;
	} else {
		h = (h ^ (uint64_t)getpid()) * 1099511628211ull;
		h = (h ^ ++count) * 1099511628211ull;
	}
	return (unsigned long)(h ^ (h >> 32));
}

/* "US" or "US>T:US2" (US2 at points of more than T tokens): the work's
 * microseconds at this workload's point; nonzero when malformed. */
static int eg__work(const char *spec, const eg_workload_t *w, uint64_t *us)
{
	const char *gt = strchr(spec, '>'), *colon = gt ? strchr(gt, ':') : 0;
	char head[32];
	uint64_t t, us2;

	if (!gt)
		return eg_parse_u64(NULL, spec, 1, UINT64_MAX, 0, us, NULL, 0);
	if (!colon || (size_t)(gt - spec) >= sizeof(head) ||
	    (size_t)(colon - gt - 1) >= sizeof(head))
		return EG_EINVAL;
	snprintf(head, sizeof(head), "%.*s", (int)(gt - spec), spec);
	if (eg_parse_u64(NULL, head, 1, UINT64_MAX, 0, us, NULL, 0))
		return EG_EINVAL;
	snprintf(head, sizeof(head), "%.*s", (int)(colon - gt - 1), gt + 1);
	if (eg_parse_u64(NULL, head, 0, UINT64_MAX, 0, &t, NULL, 0) ||
	    eg_parse_u64(NULL, colon + 1, 1, UINT64_MAX, 0, &us2, NULL, 0))
		return EG_EINVAL;
	if (w->tokens > t)
		*us = us2;
	return EG_OK;
}

/* sim's "US[>T:US2][~P]": the microseconds and the launch spread, P%. */
static int eg__sim_spec(const char *spec, const eg_workload_t *w, uint64_t *us,
			uint64_t *spread)
{
	const char *tilde = strchr(spec, '~');
	char head[64];

	if (!tilde)
		return eg__work(spec, w, us);
	if ((size_t)(tilde - spec) >= sizeof(head) ||
	    eg_parse_u64(NULL, tilde + 1, 0, 100, 0, spread, NULL, 0))
		return EG_EINVAL;
	snprintf(head, sizeof(head), "%.*s", (int)(tilde - spec), spec);
	return eg__work(head, w, us);
}

static int eg__null_setup(const eg_world_t *world, eg_boot_t *boot,
			  const eg_bench_setup_t *s, const eg_workload_t *w,
			  void **state, char *err, size_t errlen)
{
	eg__null_t *n;
	uint64_t us = 0, loops = 0, spread = 0;
	int bad = 0, sim = !strncmp(s->engine, "sim:", 4);

	(void)world;
	(void)boot;
	*state = NULL;
	if (!s->engine)
		return EG_EINVAL;
	/* work:US and loop:N take whole numbers (lib/base/num.c) */
	if (!strncmp(s->engine, "work:", 5))
		bad = eg__work(s->engine + 5, w, &us);
	else if (sim)
		bad = eg__sim_spec(s->engine + 4, w, &us, &spread);
	else if (!strncmp(s->engine, "loop:", 5))
		bad = eg_parse_u64(NULL, s->engine + 5, 1, UINT64_MAX, 0,
				   &loops, NULL, 0);
	if (strcmp(s->engine, "empty") && (bad || !(us || loops))) {
		snprintf(err, errlen,
			 "null: unknown arm \"%s\" (empty, work:US, "
			 "work:US>T:US2, loop:N, sim:US[>T:US2][~P])",
			 s->engine);
		return EG_EINVAL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return EG_ENOMEM;
	if (sim) {
		n->sim_s = (double)us * 1e-6;
		n->rng = gsl_rng_alloc(gsl_rng_taus2);
		if (!n->rng) {
			free(n);
			return EG_ENOMEM;
		}
		gsl_rng_set(n->rng, eg__sim_seed(s->engine, w));
		/* a t3 has variance 3: scaled to a spread of P% */
		n->level = exp((double)spread / 100 * gsl_ran_tdist(n->rng, 3) /
			       sqrt(3.0));
	} else
		n->iterations =
		    us ? eg_bench_spin_calibrate((double)us) : loops;
	*state = n;
	return EG_OK;
}

static int eg__null_verify(void *state, char *err, size_t errlen)
{
	(void)state;
	(void)err;
	(void)errlen;
	return EG_OK; /* nothing moves, nothing can be wrong */
}

static int eg__null_step(void *state, eg_bench_times_t *t)
{
	eg__null_t *n = state;
	double t0 = eg_now();

	if (n->iterations)
		eg_bench_spin(n->iterations);
	t->dispatch_s =
	    n->rng ? n->sim_s * n->level * exp(gsl_ran_gaussian(n->rng, 0.02))
		   : eg_now() - t0;
	t->expert_s = 0;
	t->combine_s = 0;
	n->steps++;
	return EG_OK;
}

static void eg__null_reset(void *state)
{
	((eg__null_t *)state)->steps = 0;
}

static int eg__null_counters(void *state, eg_bench_counters_t *c)
{
	(void)state;
	memset(c, 0, sizeof(*c));
	snprintf(c->transport_evidence, sizeof(c->transport_evidence), "null");
	return EG_OK;
}

static void eg__null_teardown(void *state)
{
	eg__null_t *n = state;

	if (n)
		gsl_rng_free(n->rng);
	free(n);
}

const eg_bench_backend_ops_t eg_bench_backend_null = {
    .size = sizeof(eg_bench_backend_ops_t),
    .name = "null",
    .setup = eg__null_setup,
    .verify = eg__null_verify,
    .step = eg__null_step,
    .counters_reset = eg__null_reset,
    .counters = eg__null_counters,
    .teardown = eg__null_teardown,
};
