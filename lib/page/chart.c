/* A chart as data: series of points with intervals, the marks gates
 * draw, categories for a categorical axis.  gnuplot.c draws it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/page/page.h"

/* Room for one more element of size sz in *arr (n used, *cap held). */
static int eg__room(void *arr, size_t n, size_t *cap, size_t sz)
{
	void **a = arr;
	size_t c;
	void *p;

	if (n < *cap)
		return EG_OK;
	c = *cap ? 2 * *cap : 8;
	p = realloc(*a, c * sz);
	if (!p)
		return EG_ENOMEM;
	memset((char *)p + *cap * sz, 0, (c - *cap) * sz);
	*a = p;
	*cap = c;
	return EG_OK;
}

void *eg__page_push(void *arr, size_t n, size_t sz)
{
	void **a = arr;
	char *p = realloc(*a, (n + 1) * sz);

	if (!p)
		return NULL;
	*a = p;
	memset(p + n * sz, 0, sz);
	return p + n * sz;
}

int eg__chart_series(eg__chart_t *c, const char *label, int color, int dash)
{
	eg__series_t *p;

	for (size_t i = 0; i < c->n_s; i++)
		if (!strcmp(c->s[i].label, label))
			return (int)i;
	if (!(p = eg__page_push(&c->s, c->n_s, sizeof(*p))))
		return EG_ENOMEM;
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->color = color;
	p->dash = dash;
	return (int)c->n_s++;
}

int eg__page_series_add(eg__series_t *s, double x, double y, double lo,
			double hi, int st)
{
	if (eg__room(&s->p, s->n, &s->cap, sizeof(*s->p)))
		return EG_ENOMEM;
	s->p[s->n++] = (eg__cpt_t){x, y, lo, hi, st};
	return EG_OK;
}

/* Points arrive in the order they were measured (shuffled); a line
 * joins them in x order.  Stable: points at one x keep their order. */
void eg__chart_sort(eg__chart_t *c)
{
	for (size_t i = 0; i < c->n_s; i++) {
		eg__cpt_t *p = c->s[i].p;

		for (size_t j = 1; j < c->s[i].n; j++) {
			eg__cpt_t t = p[j];
			size_t k = j;

			for (; k > 0 && p[k - 1].x > t.x; k--)
				p[k] = p[k - 1];
			p[k] = t;
		}
	}
}

eg__mark_t *eg__chart_mark(eg__chart_t *c, int kind, double a, double b)
{
	eg__mark_t *m = eg__page_push(&c->m, c->n_m, sizeof(*m));

	if (!m)
		return NULL;
	c->n_m++;
	m->kind = kind;
	m->a = a;
	m->b = b;
	m->x0 = m->x1 = NAN;
	return m;
}

int eg__chart_cat(eg__chart_t *c, const char *label)
{
	char **p;

	for (size_t i = 0; i < c->n_cats; i++)
		if (!strcmp(c->cats[i], label))
			return (int)i;
	p = realloc(c->cats, (c->n_cats + 1) * sizeof(*p));
	if (!p)
		return EG_ENOMEM;
	c->cats = p;
	if (!(c->cats[c->n_cats] = strdup(label)))
		return EG_ENOMEM;
	return (int)c->n_cats++;
}

int eg__chart_tic(eg__chart_t *c, double v, const char *label)
{
	double *tv;
	char **tl;

	for (size_t i = 0; i < c->n_tic; i++)
		if (c->tic_v[i] == v)
			return EG_OK;
	tv = realloc(c->tic_v, (c->n_tic + 1) * sizeof(*tv));
	if (tv)
		c->tic_v = tv;
	tl = realloc(c->tic_l, (c->n_tic + 1) * sizeof(*tl));
	if (tl)
		c->tic_l = tl;
	if (!tv || !tl || !(c->tic_l[c->n_tic] = strdup(label)))
		return EG_ENOMEM;
	c->tic_v[c->n_tic++] = v;
	return EG_OK;
}

void eg__chart_fini(eg__chart_t *c)
{
	for (size_t i = 0; i < c->n_tic; i++)
		free(c->tic_l[i]);
	free(c->tic_v);
	free(c->tic_l);
	for (size_t i = 0; i < c->n_s; i++)
		free(c->s[i].p);
	for (size_t i = 0; i < c->n_cats; i++)
		free(c->cats[i]);
	free(c->s);
	free(c->m);
	free(c->cats);
	free(c->svg);
	memset(c, 0, sizeof(*c));
}
