/* Re-measure before failing (docs/gates.md, "Re-measurement"): the
 * orchestrator asks which points the gates could not settle or would
 * fail on, measures them again in extra launches, and only then lets
 * the verdicts stand.  This is the question alone: every gate evaluated,
 * nothing reported. */
#include <string.h>

#include "epgate/error.h"
#include "epgate/gate.h"

int eg_gate_ids_has(const json_t *ids, const char *id)
{
	size_t k;
	json_t *v;

	json_array_foreach(ids, k, v)
	{
		if (!strcmp(json_string_value(v), id))
			return 1;
	}
	return 0;
}

int eg_gate_remeasure(const char *gates, const eg_gate_data_t *d, json_t *ids,
		      char *err, size_t errlen)
{
	eg_gate_file_t gf;
	int rc;

	if (!gates || !d || !json_is_array(ids))
		return EG_EINVAL;
	if ((rc = eg_gate_file_load(&gf, gates, err, errlen)) < 0)
		return rc;
	if ((rc = eg_gate_file_check(&gf, d, err, errlen)) < 0)
		goto out;
	for (size_t i = 0; i < gf.n_gates; i++) {
		eg_gate_result_t res;
		size_t k;
		json_t *v;

		/* a gate that errs is reported by the real run */
		if (eg_gate_eval(&gf, &gf.gates[i], d, &res, err, errlen) < 0)
			continue;
		if (res.verdict == EG_VERDICT_FAIL ||
		    res.verdict == EG_VERDICT_INCONCLUSIVE)
			json_array_foreach(res.remeasure, k, v)
			{
				if (!eg_gate_ids_has(ids, json_string_value(v)))
					json_array_append(ids, v);
			}
		eg_gate_result_fini(&res);
	}
	err[0] = 0;
	rc = 0;
out:
	eg_gate_file_free(&gf);
	return rc;
}
