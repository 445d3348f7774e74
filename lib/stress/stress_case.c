/* One case of `epgate stress` (lib/stress/stress.h): the rounds of calls,
 * every checked call's verdict, the replay of each failure, the
 * identical-input comparison and the resource watch. The sequence of
 * calls is a function of the case and the call's index alone, so a run
 * stopped after C calls replays the first C calls of any longer one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stress/stress.h"
#include "lib/stress/stress_int.h"

const char *const eg_stress_mode_names[EG_STRESS_MODES] = {
    "redraw", "identical", "burst", "overlap"};

typedef struct eg__sc {
	const eg_stress_opts_t *o;
	const eg_engine_ops_t *ops;
	eg_stress_case_t *c;
	eg_step_t *st[2];
	uint32_t next; /* the next iteration to draw */
	double t_end;
	uint8_t *ref; /* identical inputs: the round's first outputs */
	size_t ref_n, ref_cap;
	int have_ref;
	double dt; /* the last call's seconds (the trend) */
} eg__sc_t;

static uint64_t eg__mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t eg_stress_seed(const eg_workload_t *w, uint32_t iter)
{
	return eg__mix(w->seed ^ ((uint64_t)iter << 32) ^ 0x57e55ull);
}

/* Room for n more calls in the budget. */
static int eg__more(const eg__sc_t *s, unsigned n)
{
	const eg_stress_case_t *c = s->c;

	if (c->ended)
		return 0;
	if (s->o->calls)
		return c->calls + n <= s->o->calls;
	return eg_now() < s->t_end || c->checked < s->o->min_calls ||
	       c->long_calls < s->o->long_calls;
}

/* ---- one checked call ---------------------------------------------------- */

/* Instance i on iteration iter's inputs: dispatch and combine, checked. */
static int eg__verify(eg__sc_t *s, int i, uint32_t iter, eg_rank_verdict_t *v)
{
	int rc;

	eg_rank_verdict_init(v);
	if ((rc = eg_step_reseed(s->st[i], eg_stress_seed(s->c->w, iter))) <
	    0) {
		v->harness_err = rc;
		snprintf(v->stage, sizeof(v->stage), "generate");
		return rc;
	}
	eg_stress_watchdog_arm("dispatch", s->c->w->name, s->c->calls, iter);
	rc = eg_step_verify_dispatch(s->st[i], iter, v);
	if (rc == EG_OK) {
		eg_stress_watchdog_arm("combine", s->c->w->name, s->c->calls,
				       iter);
		rc = eg_step_verify_combine(s->st[i], v);
	}
	eg_stress_watchdog_disarm();
	return rc;
}

/* The failure's inputs once more, at once, on the same instance: 1 it
 * failed again, 0 it passed, -1 the replay itself ended the case. */
static int eg__replay(eg__sc_t *s, int i, uint32_t iter)
{
	eg_rank_verdict_t v;
	int rc = eg__verify(s, i, iter, &v);

	s->c->replays++;
	if (rc == EG_OK)
		return 0;
	if (rc == EG_EMISMATCH)
		return 1;
	eg_stress_end(s->c, s->ops, s->st[i], &v, rc, iter, "replay");
	return -1;
}

/* A checked call's verdict into the case: a mismatch is kept and
 * replayed; an error is kept and ends the case. */
static void eg__after(eg__sc_t *s, int i, uint32_t iter, int mode,
		      const eg_rank_verdict_t *v, int rc)
{
	eg_stress_case_t *c = s->c;
	uint64_t call = c->calls;
	int replay = -1;

	eg_stress_trend_call(&c->trend, call, s->dt);
	c->long_calls += i == 0;
	if (call == 0 && i == 0 && rc == EG_OK)
		eg_stress_runs_note(c, s->st[0]); /* run to run */
	c->calls++;
	c->checked++;
	c->mode_checked[mode]++;
	if (rc == EG_OK)
		return;
	c->failures++;
	c->mode_failed[mode]++;
	if (rc == EG_EMISMATCH)
		replay = eg__replay(s, i, iter);
	eg_stress_record(c, s->st[i], v, call, iter, mode, i, replay);
	if (rc != EG_EMISMATCH)
		eg_stress_end(c, s->ops, s->st[i], v, rc, iter,
			      eg_stress_mode_names[mode]);
}

/* Identical inputs: the round's first outputs, then each later call's
 * bytes against them. */
static void eg__compare(eg__sc_t *s, int first, uint32_t iter)
{
	eg_stress_case_t *c = s->c;
	size_t off = 0;
	int differ = 0;

	for (uint32_t r = 0; r < c->w->world; r++) {
		const void *p;
		size_t n;

		if (eg_step_output(s->st[0], r, &p, &n) < 0)
			return;
		if (first && off + n > s->ref_cap) {
			uint8_t *g = realloc(s->ref, off + n + 1);

			if (!g)
				return;
			s->ref = g, s->ref_cap = off + n + 1;
		}
		/* an empty output may be NULL: memcpy and memcmp take none */
		if (first) {
			if (n)
				memcpy(s->ref + off, p, n);
		} else if (!s->have_ref || off + n > s->ref_n)
			return;
		else if (n)
			differ |= memcmp(s->ref + off, p, n) != 0;
		off += n;
	}
	if (first) {
		s->ref_n = off, s->have_ref = 1;
		return;
	}
	c->same_compared++;
	if (differ && !c->same_differ++)
		c->differ_call = c->calls - 1, c->differ_iter = iter;
}

/* ---- the rounds -----------------------------------------------------------
 */

static void eg__round_redraw(eg__sc_t *s)
{
	for (unsigned j = 0; j < s->o->round && eg__more(s, 1); j++) {
		uint32_t it = s->next++;
		eg_rank_verdict_t v;
		double t0 = eg_now();
		int rc = eg__verify(s, 0, it, &v);

		s->dt = eg_now() - t0;
		eg__after(s, 0, it, EG_STRESS_REDRAW, &v, rc);
	}
}

static void eg__round_same(eg__sc_t *s)
{
	uint32_t it = s->next++;

	s->have_ref = 0;
	for (unsigned j = 0; j < s->o->round && eg__more(s, 1); j++) {
		eg_rank_verdict_t v;
		double t0 = eg_now();
		int rc = eg__verify(s, 0, it, &v);

		s->dt = eg_now() - t0;
		if (rc == EG_OK || rc == EG_EMISMATCH)
			eg__compare(s, j == 0, it);
		eg__after(s, 0, it, EG_STRESS_SAME, &v, rc);
	}
}

/* One call on new inputs, unchecked: no reference, no comparison. */
static int eg__unchecked(eg__sc_t *s)
{
	eg_stress_case_t *c = s->c;
	uint32_t it = s->next++;
	eg_bench_times_t t;
	double t0 = eg_now();
	int rc = eg_step_reseed(s->st[0], eg_stress_seed(c->w, it));

	eg_stress_watchdog_arm("an unchecked call", c->w->name, c->calls, it);
	if (rc == EG_OK && (rc = eg_step_generate(s->st[0], it)) == EG_OK)
		rc = eg_step_run(s->st[0], &t);
	eg_stress_watchdog_disarm();
	eg_stress_trend_call(&c->trend, c->calls, eg_now() - t0);
	c->long_calls++;
	c->calls++;
	if (rc < 0)
		eg_stress_end_unchecked(c, s->ops, s->st[0], rc, it);
	return rc;
}

/* Back to back: every call but the last unchecked, each on new inputs.
 * Which calls are checked does not depend on the budget (a round cut
 * short checks none). */
static void eg__round_burst(eg__sc_t *s)
{
	for (unsigned j = 0; j + 1 < s->o->round; j++)
		if (!eg__more(s, 1) || eg__unchecked(s) < 0)
			return;
	if (eg__more(s, 1)) {
		uint32_t it = s->next++;
		eg_rank_verdict_t v;
		double t0 = eg_now();
		int rc = eg__verify(s, 0, it, &v);

		s->dt = eg_now() - t0;
		eg__after(s, 0, it, EG_STRESS_BURST, &v, rc);
	}
}

/* Two instances on inputs of their own, kept for the round, their steps
 * interleaved as two micro-batches are: dispatch A, dispatch B, combine
 * A, combine B. */
static void eg__round_overlap(eg__sc_t *s)
{
	uint32_t it[2] = {s->next, s->next + 1};

	s->next += 2;
	for (unsigned j = 0; j + 1 < s->o->round && eg__more(s, 2); j += 2) {
		eg_rank_verdict_t v[2];
		int rc[2];
		double t0 = eg_now();

		for (int i = 0; i < 2; i++) {
			eg_rank_verdict_init(&v[i]);
			rc[i] = eg_step_reseed(s->st[i],
					       eg_stress_seed(s->c->w, it[i]));
			eg_stress_watchdog_arm("dispatch", s->c->w->name,
					       s->c->calls + i, it[i]);
			if (rc[i] == EG_OK)
				rc[i] = eg_step_verify_dispatch(s->st[i], it[i],
								&v[i]);
		}
		for (int i = 0; i < 2; i++) {
			eg_stress_watchdog_arm("combine", s->c->w->name,
					       s->c->calls + i, it[i]);
			if (rc[i] == EG_OK)
				rc[i] = eg_step_verify_combine(s->st[i], &v[i]);
		}
		eg_stress_watchdog_disarm();
		s->dt = (eg_now() - t0) / 2; /* each call of the pair */
		for (int i = 0; i < 2 && !s->c->ended; i++)
			eg__after(s, i, it[i], EG_STRESS_OVERLAP, &v[i], rc[i]);
	}
}

/* ---- the case -------------------------------------------------------------
 */

static void eg__round(eg__sc_t *s, int mode)
{
	if (mode == EG_STRESS_REDRAW)
		eg__round_redraw(s);
	else if (mode == EG_STRESS_SAME)
		eg__round_same(s);
	else if (mode == EG_STRESS_BURST)
		eg__round_burst(s);
	else if (s->st[1])
		eg__round_overlap(s);
}

/* Cycles of the rounds until the budget is spent; the resources are
 * sampled after the first cycle (what the first calls set up stays) and
 * at the end. */
static void eg__cycles(eg__sc_t *s)
{
	eg_stress_case_t *c = s->c;
	uint64_t calls0 = 0;

	for (unsigned cyc = 0; eg__more(s, 1); cyc++) {
		for (int m = 0; m < EG_STRESS_MODES && eg__more(s, 1); m++)
			eg__round(s, m);
		eg_stress_trend_cycle(&c->trend);
		if (cyc == 0 && !c->ended && eg__more(s, 1) && eg_watch_on() &&
		    eg_watch_sample(&c->w0) == EG_OK)
			c->watched = 1, calls0 = c->calls;
	}
	if (c->watched && !c->ended && eg_watch_sample(&c->w1) == EG_OK) {
		c->watch_calls = c->calls - calls0;
		c->grew = eg_watch_judge(&c->w0, &c->w1, eg_watch_bound_here(),
					 c->watch, sizeof(c->watch));
	} else {
		c->watched = 0;
	}
	eg_stress_trend_judge(&c->trend);
}

int eg_stress_case_run(const eg_stress_opts_t *o, const eg_engine_ops_t *ops,
		       double budget_s, eg_stress_case_t *c)
{
	eg__sc_t s = {.o = o, .ops = ops, .c = c, .next = c->w->iter};
	double t0 = eg_now();
	void *history;

	s.t_end = t0 + budget_s;
	c->promised = (ops->flags & (EG_ENGINE_CANONICAL_ORDER |
				     EG_ENGINE_FIXED_ORDER)) != 0;
	history = eg_stress_runs_history(c, ops);
	if (eg_stress_open(c, ops, &s.st[0]) == EG_OK &&
	    (!o->overlap || eg_stress_open(c, ops, &s.st[1]) == EG_OK))
		eg__cycles(&s);
	eg_step_close(s.st[1]);
	eg_step_close(s.st[0]);
	free(s.ref);
	eg_stress_runs_history_free(history);
	eg_stress_cycle_run(o, ops, c);
	eg_stress_repro_check(o, c); /* the instances are gone: fresh runs */
	eg_stress_runs_check(o, c);
	eg_stress_interval(c->failures, c->checked, &c->lo, &c->hi);
	c->rate = c->checked ? (double)c->failures / (double)c->checked : 0;
	c->seconds = eg_now() - t0;
	return EG_OK;
}
