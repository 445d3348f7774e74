/* `epgate stress`: the trend of call time over call index (docs/stress.md,
 * "Slow drift"). A library that gets slower with every call (a registry
 * never pruned) passes a 50-step bench; over a case's hundreds of calls
 * its growth is plain. Each cycle of rounds is one point, its fastest
 * call: the calls of a cycle are the same mix of kinds every cycle, and
 * load only ever adds time, so the fastest is what the library itself
 * costs. The slope is Theil-Sen's (the median of every pair's slope:
 * robust to the points a burst of load lifts), its 95% interval the
 * distribution-free one from Kendall's tau (Sen 1968), and the growth is
 * that slope over the case's calls relative to the first quarter's time.
 * It fails only when the whole interval lies past EG_STRESS_TREND_FAIL
 * (a significant growth, and a large one) and each half of the points,
 * fitted alone, grows significantly too: a library that slows with
 * every call grows all along, while load that rises once during a run
 * (a step: seen as +184% [+131%, +225%] for the flat template under two
 * busy loops) lifts one half only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stress/stress.h"

static int eg__cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void eg__append(eg_stress_trend_t *t, double x, double y)
{
	if (t->n == EG_STRESS_TREND_POINTS) {
		/* full: every two points one, each covering twice the
		 * cycles (its middle call, its fastest call) */
		for (uint32_t i = 0; i < t->n / 2; i++) {
			t->x[i] = (t->x[2 * i] + t->x[2 * i + 1]) / 2;
			t->y[i] = fmin(t->y[2 * i], t->y[2 * i + 1]);
		}
		t->n /= 2;
		t->per *= 2;
	}
	t->x[t->n] = x;
	t->y[t->n++] = y;
}

void eg_stress_trend_call(eg_stress_trend_t *t, uint64_t call, double s)
{
	if (!t->per)
		t->per = 1;
	if (!t->bcalls || s < t->bmin)
		t->bmin = s;
	t->bx += (double)call;
	t->bcalls++;
	if (!t->calls++)
		t->first = call;
	t->last = call;
}

void eg_stress_trend_cycle(eg_stress_trend_t *t)
{
	if (!t->bcalls)
		return;
	/* a point is per cycles: their middle call, their fastest call */
	if (!t->pend || t->bmin < t->py)
		t->py = t->bmin;
	t->px += t->bx;
	t->pcalls += t->bcalls;
	t->bx = 0, t->bcalls = 0;
	if (++t->pend < t->per)
		return;
	eg__append(t, t->px / (double)t->pcalls, t->py);
	t->pend = 0, t->px = 0, t->pcalls = 0;
}

/* Theil-Sen: the slope and its 95% interval (the Kendall-tau ranks). */
static int eg__theil_sen(const double *x, const double *y, uint32_t n,
			 double *slope, double *lo, double *hi)
{
	size_t m = 0, N = (size_t)n * (n - 1) / 2;
	double *s = malloc(N * sizeof(double)), c;
	long k1, k2;

	if (!s)
		return EG_ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (x[j] != x[i])
				s[m++] = (y[j] - y[i]) / (x[j] - x[i]);
	if (m < 2) {
		free(s);
		return EG_EINVAL;
	}
	qsort(s, m, sizeof(double), eg__cmp);
	*slope = m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
	c = 1.96 * sqrt((double)n * (n - 1) * (2.0 * n + 5) / 18);
	k1 = (long)floor(((double)m - c) / 2);	  /* 0-based */
	k2 = (long)ceil(((double)m + c) / 2) - 1; /* 0-based */
	*lo = s[k1 < 0 ? 0 : k1];
	*hi = s[k2 >= (long)m ? (long)m - 1 : k2];
	free(s);
	return EG_OK;
}

void eg_stress_trend_judge(eg_stress_trend_t *t)
{
	uint32_t q;
	double slope, lo, hi, early, span, *e;

	eg_stress_trend_cycle(t); /* a last, partial cycle */
	if (t->pend) {		  /* a last, partial point */
		eg__append(t, t->px / (double)t->pcalls, t->py);
		t->pend = 0;
	}
	if (t->n < EG_STRESS_TREND_MIN_POINTS) {
		snprintf(t->say, sizeof(t->say),
			 "not judged: %u cycles of calls, fewer than %u", t->n,
			 EG_STRESS_TREND_MIN_POINTS);
		return;
	}
	if (eg__theil_sen(t->x, t->y, t->n, &slope, &lo, &hi) < 0 ||
	    !(e = malloc(t->n * sizeof(double)))) {
		snprintf(t->say, sizeof(t->say), "not judged: no slope");
		return;
	}
	q = t->n / 4 < 2 ? 2 : t->n / 4;
	memcpy(e, t->y, q * sizeof(double));
	qsort(e, q, sizeof(double), eg__cmp);
	early = q % 2 ? e[q / 2] : (e[q / 2 - 1] + e[q / 2]) / 2;
	free(e);
	if (early <= 0) {
		snprintf(t->say, sizeof(t->say), "not judged: no call time");
		return;
	}
	/* each half alone: its slope's interval above 0 */
	for (int h = 0; h < 2; h++) {
		uint32_t a = h ? t->n / 2 : 0,
			 m = h ? t->n - t->n / 2 : t->n / 2;
		double hs, hl, hh;

		t->half[h] =
		    eg__theil_sen(t->x + a, t->y + a, m, &hs, &hl, &hh) == EG_OK
			? hl
			: 0;
	}
	span = (double)(t->last - t->first);
	t->judged = 1;
	t->early_s = early;
	t->growth = slope * span / early;
	t->lo = lo * span / early;
	t->hi = hi * span / early;
	t->grew =
	    t->lo > EG_STRESS_TREND_FAIL && t->half[0] > 0 && t->half[1] > 0;
	snprintf(t->say, sizeof(t->say),
		 "%s: %+.0f%% over %llu calls (95%% [%+.0f%%, %+.0f%%], "
		 "Theil-Sen over %u points: the fastest call of every %u "
		 "cycle(s)), "
		 "from %.1f us a call; each half %s; bound: the interval past "
		 "%+.0f%% and each half growing",
		 t->grew ? "call time grows"
		 : t->lo > EG_STRESS_TREND_FAIL
		     ? "not judged growing (one half flat: a change of load, "
		       "not a trend)"
		     : "flat within bound",
		 100 * t->growth, (unsigned long long)(t->last - t->first + 1),
		 100 * t->lo, 100 * t->hi, t->n, t->per, 1e6 * early,
		 t->half[0] > 0 && t->half[1] > 0 ? "growing"
		 : t->half[0] > 0		  ? "not: the second flat"
		 : t->half[1] > 0		  ? "not: the first flat"
						  : "not: both flat",
		 100 * EG_STRESS_TREND_FAIL);
}
