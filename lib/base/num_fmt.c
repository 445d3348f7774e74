/* Numbers to text for people (include/epgate/num.h): one style for the
 * page, the gate lines and summary.md, so a value reads the same in
 * each. */
#include <math.h>
#include <stdio.h>

#include "epgate/num.h"

const char *eg_fmt_num(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) < 1e15 && (fabs(v) >= 1000 || v == floor(v)))
		snprintf(buf, len, "%.0f", v); /* "11930", no exponent */
	else
		snprintf(buf, len, "%.4g", v); /* "0.7071", "1e+20" */
	return buf;
}
