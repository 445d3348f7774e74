/* `epgate stress`: instance cycling (docs/stress.md, "Instances"). The
 * resource watch of the rounds judges growth over one instance's calls;
 * a library whose destroy leaves what create mapped (a buffer, an IPC
 * handle, a descriptor) leaks once per instance, and frameworks create
 * one on every shape change. So after its rounds a case creates
 * --instances instances one after another, each making --instance-calls
 * checked calls before it is destroyed, all in one process (a plugin's
 * forked child stays between them: eg_engine_keep_process), and judges
 * what the instances after the first left behind against the stated
 * bound, said per instance. Their calls are checked too: a second
 * instance that inherits the first one's state is wrong there. */
#include <stdio.h>
#include <string.h>

#include "lib/stress/stress.h"
#include "lib/stress/stress_int.h"

/* Instance i's checked calls; 0, or <0 when an error ended the cycling. */
static int eg__calls(const eg_stress_opts_t *o, eg_stress_case_t *c,
		     eg_step_t *st, uint32_t i)
{
	eg_stress_cycle_t *y = &c->cyc;

	for (uint32_t j = 0; j < o->instance_calls; j++) {
		uint32_t it = c->w->iter + i * o->instance_calls + j;
		eg_rank_verdict_t v;
		int rc;

		eg_rank_verdict_init(&v);
		rc = eg_step_reseed(st, eg_stress_seed(c->w, it));
		eg_stress_watchdog_arm("dispatch", c->w->name, j, it);
		if (rc == EG_OK)
			rc = eg_step_verify_dispatch(st, it, &v);
		eg_stress_watchdog_arm("combine", c->w->name, j, it);
		if (rc == EG_OK)
			rc = eg_step_verify_combine(st, &v);
		eg_stress_watchdog_disarm();
		y->calls++;
		if (rc == EG_OK)
			continue;
		if (!y->failures++) {
			const char *m = v.engine_msg[0]
					    ? v.engine_msg
					    : eg_step_engine_error(st);

			snprintf(y->first, sizeof(y->first),
				 "instance %u, its call %u (iteration %u): "
				 "%.24s: %s%s%.300s",
				 i, j, it, v.stage[0] ? v.stage : "call",
				 rc == EG_EMISMATCH ? "wrong" : eg_err_name(rc),
				 m && *m && rc != EG_EMISMATCH ? ": " : "",
				 m && rc != EG_EMISMATCH ? m : "");
		}
		if (rc != EG_EMISMATCH) {
			y->ended = 1;
			return rc;
		}
	}
	return EG_OK;
}

void eg_stress_cycle_run(const eg_stress_opts_t *o, const eg_engine_ops_t *ops,
			 eg_stress_case_t *c)
{
	eg_stress_cycle_t *y = &c->cyc;
	int watch = eg_watch_on() && o->instances >= 2;

	/* a replay or run-to-run check's own run reads only the rounds'
	 * failures and hashes: no instances there */
	if (!o->instances || c->skipped || c->ended || eg_stress_is_check())
		return;
	eg_engine_keep_process(1);
	for (uint32_t i = 0; i < o->instances; i++) {
		eg_stress_case_t one = {.w = c->w}; /* its setup's verdict */
		eg_step_t *st = NULL;
		int rc;

		if (eg_stress_open(&one, ops, &st) < 0) {
			y->ended = 1;
			snprintf(y->first, sizeof(y->first),
				 "instance %u: create: %.500s", i,
				 one.skipped ? one.skip_why : one.end);
			break;
		}
		rc = eg__calls(o, c, st, i);
		eg_step_close(st);
		y->instances++;
		if (rc < 0)
			break;
		/* what the first instance set up stays (a library loaded, a
		 * pool): judged from the end of the first on */
		if (watch && i == 0 && eg_watch_sample(&y->w0) != EG_OK)
			watch = 0;
	}
	/* before the kept process ends: what its instances left is in it */
	if (watch && !y->ended && eg_watch_sample(&y->w1) == EG_OK) {
		const double mib = 1024.0 * 1024.0;
		double n = y->instances - 1;
		size_t l;

		y->watched = 1;
		y->grew = eg_watch_judge(&y->w0, &y->w1, eg_watch_bound_here(),
					 y->watch, sizeof(y->watch));
		l = strlen(y->watch);
		snprintf(y->watch + l, sizeof(y->watch) - l,
			 "; per instance: resident memory %+.3f MiB, "
			 "descriptors %+.2f",
			 ((double)y->w1.rss_bytes - (double)y->w0.rss_bytes) /
			     mib / n,
			 ((double)y->w1.fds - (double)y->w0.fds) / n);
		l = strlen(y->watch);
		if (y->w0.have_dev && y->w1.have_dev)
			snprintf(y->watch + l, sizeof(y->watch) - l,
				 ", device memory %+.3f MiB",
				 ((double)y->w1.dev_bytes -
				  (double)y->w0.dev_bytes) /
				     mib / n);
	}
	eg_engine_keep_process(0);
}
