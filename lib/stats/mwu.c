/* Mann-Whitney U test.  Exact null distribution for small samples
 * without ties: the number of arrangements with U = u is the coefficient
 * of q^u in the Gaussian binomial [nx+ny choose nx]_q, built as the
 * product over i = 1..nx of (1 - q^(ny+i)) / (1 - q^i); every
 * intermediate is itself a Gaussian binomial, so the integer counts stay
 * exact in doubles up to C(50, 25) ~ 1.3e14 < 2^53.  Otherwise the
 * normal approximation with the tie-corrected variance. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "epgate/error.h"
#include "epgate/stats.h"

struct eg__tagged {
	double v;
	int from_x;
};

static int eg__cmp_tagged(const void *a, const void *b)
{
	double x = ((const struct eg__tagged *)a)->v;
	double y = ((const struct eg__tagged *)b)->v;

	return (x > y) - (x < y);
}

/* Counts of U = 0 .. nx*ny under the null; NULL on allocation failure. */
static double *eg__mwu_counts(size_t nx, size_t ny)
{
	size_t deg = 0, top = nx * ny;
	double *p = calloc(top + 1, sizeof(*p));

	if (!p)
		return NULL;
	p[0] = 1;
	for (size_t i = 1; i <= nx; i++) {
		size_t k = ny + i;

		/* times (1 - q^k), downwards so old values are read */
		for (size_t j = deg + k; j >= k; j--)
			if (j <= top)
				p[j] -= p[j - k];
		/* over (1 - q^i): an exact division */
		deg += ny;
		for (size_t j = i; j <= deg; j++)
			p[j] += p[j - i];
		/* the product's tail above the quotient's degree is gone */
		for (size_t j = deg + 1; j <= top; j++)
			p[j] = 0;
	}
	return p;
}

int eg_stats_mwu(const double *x, size_t nx, const double *y, size_t ny,
		 eg_mwu_t *out)
{
	size_t n = nx + ny, i = 0;
	struct eg__tagged *a;
	double r1 = 0, ties = 0;

	if (!x || !y || !nx || !ny || !out)
		return EG_EINVAL;
	a = malloc(n * sizeof(*a));
	if (!a)
		return EG_ENOMEM;
	for (size_t k = 0; k < nx; k++)
		a[k] = (struct eg__tagged){x[k], 1};
	for (size_t k = 0; k < ny; k++)
		a[nx + k] = (struct eg__tagged){y[k], 0};
	for (size_t k = 0; k < n; k++)
		if (!isfinite(a[k].v)) {
			free(a);
			return EG_ERANGE;
		}
	qsort(a, n, sizeof(*a), eg__cmp_tagged);
	/* mid-ranks (1-based) over runs of equal values */
	while (i < n) {
		size_t j = i;
		double rank, t;

		while (j + 1 < n && a[j + 1].v == a[i].v)
			j++;
		rank = (double)(i + j + 2) / 2;
		t = (double)(j - i + 1);
		ties += t * t * t - t;
		for (size_t k = i; k <= j; k++)
			if (a[k].from_x)
				r1 += rank;
		i = j + 1;
	}
	free(a);
	out->u = r1 - (double)nx * (double)(nx + 1) / 2;
	out->exact = 0;
	if (ties == 0 && nx <= EG_MWU_EXACT_MAX && ny <= EG_MWU_EXACT_MAX) {
		double *c = eg__mwu_counts(nx, ny), tot = 0, le = 0, ge = 0;
		size_t u = (size_t)out->u;

		if (!c)
			return EG_ENOMEM;
		for (size_t k = 0; k <= nx * ny; k++) {
			tot += c[k];
			if (k <= u)
				le += c[k];
			if (k >= u)
				ge += c[k];
		}
		free(c);
		out->p_less = le / tot;
		out->p_greater = ge / tot;
		out->exact = 1;
		return 0;
	}
	{
		double nn = (double)n, mu = (double)nx * (double)ny / 2;
		double var = (double)nx * (double)ny / 12 *
			     ((nn + 1) - ties / (nn * (nn - 1)));

		if (!(var > 0)) {
			/* every value equal: no evidence either way */
			out->p_less = out->p_greater = 1;
			return 0;
		}
		out->p_greater =
		    gsl_cdf_ugaussian_Q((out->u - mu - 0.5) / sqrt(var));
		out->p_less =
		    gsl_cdf_ugaussian_P((out->u - mu + 0.5) / sqrt(var));
	}
	return 0;
}

static int eg__cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int eg_stats_shift_ci(const double *x, size_t nx, const double *y, size_t ny,
		      double alpha, double *est, double *lo, double *hi)
{
	size_t m = nx * ny, k = 0;
	double *d, z, mu, sd;
	long c;

	if (!x || !y || !nx || !ny || !(alpha > 0 && alpha < 0.5) || !est ||
	    !lo || !hi)
		return EG_EINVAL;
	if (nx > (1u << 20) / ny)
		return EG_ERANGE;
	if (!(d = malloc(m * sizeof(*d))))
		return EG_ENOMEM;
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			d[k++] = y[j] - x[i];
	qsort(d, m, sizeof(*d), eg__cmp_d);
	*est = m % 2 ? d[m / 2] : (d[m / 2 - 1] + d[m / 2]) / 2;
	/* Moses: the c-th smallest and largest differences, c the lower
	 * critical value of U at alpha (normal approximation) */
	z = gsl_cdf_ugaussian_Pinv(1 - alpha);
	mu = (double)m / 2;
	sd = sqrt((double)m * (double)(nx + ny + 1) / 12);
	c = (long)floor(mu - z * sd);
	if (c < 1)
		c = 1;
	if ((size_t)c > m)
		c = (long)m;
	*lo = d[c - 1];
	*hi = d[m - (size_t)c];
	free(d);
	return 0;
}

/* Counts of the signed-rank statistic W+ = 0 .. n(n+1)/2 under the null:
 * each rank is in W+ or not, a subset-sum count. */
static double *eg__wsr_counts(size_t n)
{
	size_t top = n * (n + 1) / 2;
	double *c = calloc(top + 1, sizeof(*c));

	if (!c)
		return NULL;
	c[0] = 1;
	for (size_t r = 1; r <= n; r++)
		for (size_t s = top; s >= r; s--)
			c[s] += c[s - r];
	return c;
}

int eg_stats_signed_rank(const double *d, size_t n, double *p_greater,
			 double *p_less)
{
	struct eg__tagged *a;
	size_t m = 0, i = 0;
	double wp = 0, ties = 0;

	if (!d || !p_greater || !p_less)
		return EG_EINVAL;
	if (!(a = malloc((n ? n : 1) * sizeof(*a))))
		return EG_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (!isfinite(d[k])) {
			free(a);
			return EG_ERANGE;
		}
		if (d[k] != 0)
			a[m++] = (struct eg__tagged){fabs(d[k]), d[k] > 0};
	}
	*p_greater = *p_less = 1;
	if (!m) {
		free(a);
		return EG_OK;
	}
	qsort(a, m, sizeof(*a), eg__cmp_tagged);
	while (i < m) {
		size_t j = i;

		while (j + 1 < m && a[j + 1].v == a[i].v)
			j++;
		for (size_t k = i; k <= j; k++)
			if (a[k].from_x)
				wp += (double)(i + j + 2) / 2;
		ties += (double)(j - i + 1) * (double)(j - i + 1) *
			    (double)(j - i + 1) -
			(double)(j - i + 1);
		i = j + 1;
	}
	free(a);
	if (ties == 0 && m <= EG_MWU_EXACT_MAX) {
		double *c = eg__wsr_counts(m), tot = 0, ge = 0, le = 0;
		size_t w = (size_t)wp;

		if (!c)
			return EG_ENOMEM;
		for (size_t s = 0; s <= m * (m + 1) / 2; s++) {
			tot += c[s];
			ge += s >= w ? c[s] : 0;
			le += s <= w ? c[s] : 0;
		}
		free(c);
		*p_greater = ge / tot;
		*p_less = le / tot;
		return EG_OK;
	}
	{
		double mm = (double)m, mu = mm * (mm + 1) / 4;
		double var = mm * (mm + 1) * (2 * mm + 1) / 24 - ties / 48;

		if (!(var > 0))
			return EG_OK;
		*p_greater = gsl_cdf_ugaussian_Q((wp - mu - 0.5) / sqrt(var));
		*p_less = gsl_cdf_ugaussian_P((wp - mu + 0.5) / sqrt(var));
	}
	return EG_OK;
}
