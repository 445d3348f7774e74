/* A profile's gates, evaluated in process on the results the page
 * shows: the gate engine's own calls (eg_gate_file_load,
 * eg_gate_file_check, eg_gate_eval), so the verdicts, bands and bounds
 * on the page are exactly the engine's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/profile.h"
#include "lib/page/page.h"
#include "lib/base/data_path.h"

int eg__page_find_gates(const char *profile, char *out, size_t len)
{
	char path[4096], err[EG_PROFILE_ERR_MAX], rel[512];
	eg_profile_t p;
	int rc = EG_ENOENT;

	/* the profile names its gate file (p5en-ep32 shares p5en-ep16's) */
	if (eg_bench_find_profile(profile, path, sizeof(path)) == 0 &&
	    eg_profile_load(&p, path, err, sizeof(err)) == 0) {
		if (p.gates)
			rc = eg_find_data(p.gates, out, len);
		eg_profile_free(&p);
		if (rc == 0)
			return rc;
	}
	snprintf(rel, sizeof(rel), "gates/%s.gate", profile);
	return eg_find_data(rel, out, len);
}

const eg_point_t *eg__prof_point(const eg__prof_t *p, const char *id)
{
	for (size_t f = 0; id && f < p->n_cur; f++)
		for (size_t i = 0; i < p->cur[f].n_points; i++)
			if (!strcmp(p->cur[f].points[i].id, id))
				return &p->cur[f].points[i];
	return NULL;
}

/* Every gate of the file, each to its result or its error. */
static int eg__evaluate(eg__prof_t *p)
{
	eg_gate_data_t d = {p->cur, p->n_cur, p->n_base ? p->base : NULL,
			    p->n_base};
	int rc;

	p->gr = calloc(p->gf.n_gates + 1, sizeof(*p->gr));
	p->cells = calloc(p->gf.n_gates + 1, sizeof(*p->cells));
	if (!p->gr || !p->cells)
		return EG_ENOMEM;
	for (size_t i = 0; i < p->gf.n_gates; i++) {
		eg__gres_t *r = &p->gr[i];

		r->g = &p->gf.gates[i];
		rc = eg_gate_eval(&p->gf, r->g, &d, &r->res, r->err,
				  sizeof(r->err));
		if (rc < 0 && rc != EG_EPARSE)
			snprintf(r->err, sizeof(r->err),
				 "%s:%d: gate \"%s\": %s", p->gf.path,
				 r->g->line, r->g->name, eg_strerror(rc));
		r->hard = rc < 0;
		if (eg__gate_cells(r, p->cur, p->n_cur, &p->cells[i]) < 0)
			return EG_ENOMEM;
	}
	return EG_OK;
}

int eg__prof_judge(eg__prof_t *p, char *err, size_t len)
{
	eg_gate_data_t d = {p->cur, p->n_cur, p->n_base ? p->base : NULL,
			    p->n_base};
	char gerr[EG_GATE_ERR_MAX];

	if (!p->gates_path[0] && eg__page_find_gates(p->name, p->gates_path,
						     sizeof(p->gates_path))) {
		snprintf(p->gerr, sizeof(p->gerr),
			 "no gate file for profile %s (gates/%s.gate, or the "
			 "profile's gates:)",
			 p->name, p->name);
		return EG_OK;
	}
	if (eg_gate_file_load(&p->gf, p->gates_path, gerr, sizeof(gerr))) {
		snprintf(err, len, "%s", gerr);
		return EG_EPARSE;
	}
	p->have_gf = 1;
	/* a name the results do not know is the gate file's error: said
	 * on the page, as `epgate gate` would say it, and nothing judged */
	if (eg_gate_file_check(&p->gf, &d, gerr, sizeof(gerr))) {
		snprintf(p->gerr, sizeof(p->gerr), "%s", gerr);
		return EG_OK;
	}
	return eg__evaluate(p);
}

void eg__prof_fini(eg__prof_t *p)
{
	for (size_t i = 0; p->gr && i < p->gf.n_gates; i++)
		if (!p->gr[i].hard && p->gr[i].g)
			eg_gate_result_fini(&p->gr[i].res);
	for (size_t i = 0; p->cells && i < p->gf.n_gates; i++)
		eg__page_cells_fini(&p->cells[i]);
	for (size_t i = 0; i < p->n_su; i++) {
		for (size_t k = 0; k < p->su[i].n_cols; k++)
			free(p->su[i].cols[k]);
		free(p->su[i].cols);
	}
	for (size_t i = 0; i < p->n_ch; i++)
		eg__chart_fini(&p->ch[i]);
	free(p->gr);
	free(p->cells);
	free(p->su);
	free(p->ch);
	if (p->have_gf)
		eg_gate_file_free(&p->gf);
	eg_results_free_all(p->cur, p->n_cur);
	eg_results_free_all(p->base, p->n_base);
	json_decref(p->verdicts);
	memset(p, 0, sizeof(*p));
}
