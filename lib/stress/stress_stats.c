/* `epgate stress`: the failure rate's interval, a case's verdict and the
 * commands that replay a failure (lib/stress/stress.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "lib/stress/stress.h"
#include "lib/stress/stress_int.h"

/* The p quantile of Beta(a, b) by bisection on GSL's CDF: GSL's own
 * gsl_cdf_beta_Pinv fails to converge for common cases (2 failures in
 * 260 calls) and its error handler aborts the process. The CDF is
 * monotone in x, so 64 halvings pin the quantile to 2^-64. */
static double eg__beta_quantile(double p, double a, double b)
{
	double lo = 0, hi = 1;

	for (int i = 0; i < 64; i++) {
		double mid = lo + (hi - lo) / 2;

		if (gsl_cdf_beta_P(mid, a, b) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

void eg_stress_interval(uint64_t x, uint64_t n, double *lo, double *hi)
{
	const double a = 0.05;

	if (!n || x > n) {
		*lo = 0, *hi = 1;
		return;
	}
	/* the exact binomial interval: beta quantiles of a/2 and 1-a/2 */
	*lo = x ? eg__beta_quantile(a / 2, (double)x, (double)(n - x + 1)) : 0;
	*hi = x < n ? eg__beta_quantile(1 - a / 2, (double)(x + 1),
					(double)(n - x))
		    : 1;
}

int eg_stress_case_failed(const eg_stress_case_t *c)
{
	return !c->skipped && (c->failures || c->ended || c->grew ||
			       (c->promised && c->same_differ) ||
			       eg_stress_runs_failed(c) || c->cyc.failures ||
			       c->cyc.ended || c->cyc.grew || c->trend.grew);
}

/* "epgate stress --engine=E [--overlap] --calls=N KEYS", keys from w
 * (iter as given), with the environment that changes what runs. */
static void eg__cmd(const eg_stress_opts_t *o, const eg_workload_t *w,
		    uint64_t calls, char *buf, size_t len)
{
	static const char check[] = "epgate check ";
	const char *seed = getenv("EPGATE_FAULT_SEED");
	char args[4096], eng[600], n[64];
	size_t l;

	buf[0] = '\0';
	eg_repro_env(buf, len);
	if (seed && *seed) {
		char e[96];

		snprintf(e, sizeof(e), "EPGATE_FAULT_SEED=%s", seed);
		eg_shell_append(buf, len, e);
	}
	eg_shell_append(buf, len, "epgate");
	eg_shell_append(buf, len, "stress");
	snprintf(eng, sizeof(eng), "--engine=%s", o->engine);
	eg_shell_append(buf, len, eng);
	if (o->overlap)
		eg_shell_append(buf, len, "--overlap");
	if (o->round != 16) {
		snprintf(n, sizeof(n), "--round=%u", o->round);
		eg_shell_append(buf, len, n);
	}
	snprintf(n, sizeof(n), "--calls=%llu", (unsigned long long)calls);
	eg_shell_append(buf, len, n);
	if (eg_workload_to_args(w, args, sizeof(args)) < 0)
		return;
	l = strlen(buf);
	snprintf(buf + l, len - l, " %s",
		 strncmp(args, check, sizeof(check) - 1)
		     ? args
		     : args + sizeof(check) - 1);
}

void eg_stress_repro(const eg_stress_opts_t *o, const eg_stress_case_t *c,
		     const eg_stress_fail_t *f, char *inputs, size_t ilen,
		     char *sequence, size_t slen)
{
	eg_workload_t w;

	inputs[0] = sequence[0] = '\0';
	if (!f && !c->n_fails)
		return;
	if (!f)
		f = &c->fails[0];
	if (eg_workload_copy(&w, c->w) < 0)
		return;
	w.iter = f->iter; /* the first call of a run draws its iter */
	eg__cmd(o, &w, 1, inputs, ilen);
	eg_workload_fini(&w);
	eg__cmd(o, c->w, eg_stress_repro_calls(f), sequence, slen);
}

uint64_t eg_stress_repro_calls(const eg_stress_fail_t *f)
{
	/* an overlap round's first instance: the round needs its second
	 * call too, or a run cut there skips the round */
	return f->call + 1 + (f->mode == EG_STRESS_OVERLAP && f->instance == 0);
}
