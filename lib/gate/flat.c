/* The flat rule on one series: within the band everywhere, and no trend
 * that is both statistically significant and practically steep (more
 * than max_slope per unit of x).  Requiring both keeps the false-alarm
 * rate on truly flat series well under alpha (calibration test). */
#include <math.h>

#include "epgate/error.h"
#include "epgate/gate.h"

int eg_flat_check(const double *x, const double *v, const double *se, size_t n,
		  const eg_flat_opts_t *o, eg_flat_out_t *out)
{
	int rc;

	if (!v || !n || !o || !out || !(o->band[0] <= o->band[1]))
		return EG_EINVAL;
	out->n_out_of_band = 0;
	out->first_out = 0;
	out->trend_tested = 0;
	out->trend = 0;
	out->slope = (eg_slope_t){NAN, NAN, NAN, 0};
	for (size_t i = 0; i < n; i++) {
		if (v[i] >= o->band[0] && v[i] <= o->band[1])
			continue;
		if (!out->n_out_of_band++)
			out->first_out = i;
	}
	if (x && n >= 2) {
		rc = eg_stats_slope(x, v, se, n, o->alpha, &out->slope);
		if (rc)
			return rc;
		if (!isnan(out->slope.se_slope)) {
			double b = fabs(out->slope.slope);

			out->trend_tested = 1;
			out->trend =
			    b > out->slope.crit * out->slope.se_slope &&
			    b > o->max_slope;
		}
	}
	out->verdict = out->n_out_of_band || out->trend ? EG_VERDICT_FAIL
							: EG_VERDICT_PASS;
	return 0;
}
