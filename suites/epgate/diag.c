/* Diagnostics of one failed case, as a JSON object for TAP YAML and the
 * results files: where it failed, wrong counts per field, the first
 * mismatches with coordinates, and the command that reproduces it. */
#include <stdio.h>

#include "cli.h"

json_t *eg_case_diag(const eg_workload_t *w, const eg_verdict_t *v,
		     const char *stage, unsigned iter, int engine_err,
		     const char *repro)
{
	json_t *d = json_object(), *wrong = json_object(), *first;
	char sum[256];

	eg_workload_summary(w, sum, sizeof(sum));
	json_object_set_new(d, "workload", json_string(sum));
	json_object_set_new(d, "stage", json_string(stage ? stage : ""));
	json_object_set_new(d, "iteration", json_integer(iter));
	if (engine_err)
		json_object_set_new(d, "engine_error",
				    json_string(eg_strerror(engine_err)));
	for (int f = 0; f < EG_FIELD__COUNT; f++)
		if (v->wrong[f])
			json_object_set_new(
			    wrong, eg_field_name((eg_field_t)f),
			    json_integer((json_int_t)v->wrong[f]));
	if (v->missing_rows)
		json_object_set_new(wrong, "missing_rows",
				    json_integer((json_int_t)v->missing_rows));
	if (v->duplicate_rows)
		json_object_set_new(
		    wrong, "duplicate_rows",
		    json_integer((json_int_t)v->duplicate_rows));
	if (v->unknown_rows)
		json_object_set_new(wrong, "unknown_rows",
				    json_integer((json_int_t)v->unknown_rows));
	if (v->nonfinite)
		json_object_set_new(wrong, "nonfinite",
				    json_integer((json_int_t)v->nonfinite));
	json_object_set_new(d, "wrong", wrong);
	first = json_array();
	for (uint32_t i = 0; i < v->n_first; i++) {
		const eg_mismatch_t *m = &v->first[i];
		json_t *o = json_object();
		json_object_set_new(o, "field",
				    json_string(eg_field_name(m->field)));
		json_object_set_new(o, "rank", json_integer(m->rank));
		json_object_set_new(o, "src_rank", json_integer(m->src_rank));
		json_object_set_new(o, "src_token", json_integer(m->src_token));
		json_object_set_new(o, "expert", json_integer(m->expert));
		json_object_set_new(o, "row", json_integer(m->row));
		json_object_set_new(o, "col", json_integer(m->col));
		char b[32];
		snprintf(b, sizeof(b), "0x%llx",
			 (unsigned long long)m->expected);
		json_object_set_new(o, "expected", json_string(b));
		snprintf(b, sizeof(b), "0x%llx", (unsigned long long)m->actual);
		json_object_set_new(o, "actual", json_string(b));
		json_array_append_new(first, o);
	}
	json_object_set_new(d, "first_mismatches", first);
	json_object_set_new(d, "repro", json_string(repro));
	return d;
}
