/* Noise-aware slope for the flat rule: weighted least squares with the
 * per-point errors, its standard error inflated by the Birge ratio
 * sqrt(chi2 / (n-2)) when the points scatter more than their errors say
 * (then Student t with n-2 degrees of freedom, not the normal, gives the
 * critical value).  With few axis points (3-5 is typical) a rank test
 * cannot reach significance at all; this test can, but only when the
 * per-point intervals are tight and the points agree with a line. */
#include <math.h>

#include <gsl/gsl_cdf.h>

#include "epgate/error.h"
#include "epgate/stats.h"

int eg_stats_slope(const double *x, const double *v, const double *se, size_t n,
		   double alpha, eg_slope_t *out)
{
	double sw = 0, swx = 0, swv = 0, sxx = 0, sxv = 0, chi2 = 0;
	double xb, vb, a, se_known = NAN, se_scatter = NAN;
	int weighted = se != NULL;

	if (!x || !v || n < 2 || !out || !(alpha > 0 && alpha < 1))
		return EG_EINVAL;
	for (size_t i = 0; weighted && i < n; i++)
		if (!(se[i] > 0) || !isfinite(se[i]))
			weighted = 0;
	for (size_t i = 0; i < n; i++) {
		double w = weighted ? 1 / (se[i] * se[i]) : 1;

		sw += w;
		swx += w * x[i];
		swv += w * v[i];
	}
	xb = swx / sw;
	vb = swv / sw;
	for (size_t i = 0; i < n; i++) {
		double w = weighted ? 1 / (se[i] * se[i]) : 1;

		sxx += w * (x[i] - xb) * (x[i] - xb);
		sxv += w * (x[i] - xb) * (v[i] - vb);
	}
	if (!(sxx > 0))
		return EG_EINVAL;
	out->slope = sxv / sxx;
	a = vb - out->slope * xb;
	for (size_t i = 0; i < n; i++) {
		double w = weighted ? 1 / (se[i] * se[i]) : 1;
		double r = v[i] - (a + out->slope * x[i]);

		chi2 += w * r * r;
	}
	if (weighted)
		se_known = sqrt(1 / sxx);
	if (n >= 3)
		se_scatter = sqrt(chi2 / (double)(n - 2) / sxx);
	out->from_scatter = 0;
	out->se_slope = se_known;
	out->crit = gsl_cdf_ugaussian_Pinv(1 - alpha / 2);
	if (isnan(se_known) || se_scatter > se_known) {
		out->se_slope = se_scatter;
		out->from_scatter = !isnan(se_scatter);
		if (out->from_scatter)
			out->crit =
			    gsl_cdf_tdist_Pinv(1 - alpha / 2, (double)(n - 2));
	}
	return 0;
}
