/* What ran at a point beyond its transport (docs/results-v1.md,
 * "Evidence"): every rank's libraries as loaded, its host and GPU, and,
 * for a plugin arm, the library under test as the plugin declares it.
 * Rank 0 builds it from the gathered reports (driver.c). */
#include <stdio.h>
#include <string.h>

#include "epgate/bench_driver.h"
#include "epgate/error.h"
#include "epgate/plugin_info.h"

/* The distinct values of field off of the W reports, " | "-joined. */
static int eg__ranks(json_t *o, const char *key,
		     const eg_bench_rank_report_t *rep, uint32_t W, size_t off)
{
	char all[512] = "";

	for (uint32_t r = 0; r < W; r++) {
		const char *v = (const char *)&rep[r].loaded + off;
		int seen = 0;

		for (uint32_t q = 0; q < r; q++)
			seen |= !strcmp(v, (const char *)&rep[q].loaded + off);
		if (seen || !v[0])
			continue;
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s",
			 all[0] ? " | " : "", v);
	}
	if (!all[0])
		return EG_OK;
	return json_object_set_new(o, key, json_string(all)) ? EG_ENOMEM
							     : EG_OK;
}

int eg_bench_evidence_more(json_t *o, const eg_bench_rank_report_t *rep,
			   uint32_t W, const char *engine,
			   const eg_bench_model_t *raw)
{
#define EG__F(k)                                                               \
	{                                                                      \
#k, offsetof(eg_loaded_t, k)                                   \
	}
	static const struct {
		const char *key;
		size_t off;
	} f[] = {EG__F(host),	     EG__F(gpu),     EG__F(nccl),
		 EG__F(libfabric),   EG__F(nvshmem), EG__F(cuda),
		 EG__F(cuda_driver), EG__F(driver)};
#undef EG__F
	eg_plugin_info_t pi;
	char tr[128];
	int rc = EG_OK;

	for (size_t i = 0; !rc && i < sizeof(f) / sizeof(f[0]); i++)
		rc = eg__ranks(o, f[i].key, rep, W, f[i].off);
	if (!rc && eg_plugin_info_loaded(engine, &pi) == EG_OK) {
		rc = eg_plugin_info_evidence(&pi, o);
		/* the spec that ran: a named arm's (arms: of the profile)
		 * with its knobs, num_comms put in */
		if (!rc &&
		    json_object_set_new(o, "engine", json_string(engine)))
			rc = EG_ENOMEM;
	}
	if (!rc && raw && raw->src == EG_BENCH_MODEL_MEASURED &&
	    raw->provider[0]) {
		snprintf(tr, sizeof(tr), "fabric %s", raw->provider);
		rc = json_object_set_new(o, "raw_transport", json_string(tr))
			 ? EG_ENOMEM
			 : EG_OK;
	}
	return rc;
}
