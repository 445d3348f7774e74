/* Planted slowdowns ("slow:AMOUNT:ENGINE", docs/gates.md "Planted
 * slowdowns"): the wrapped engine, with every dispatch made longer by a
 * fraction of its own time ("slow:10%:a2a": 10% of that dispatch's wall
 * time) or by a fixed time ("slow:50us:a2a").  The extra time is spent
 * busy on the monotonic clock after the wrapped dispatch returns, as a
 * slower implementation would spend it (a sleep would hand the core to
 * the other ranks and plant less than it says); on a GPU the dispatch
 * returns synchronized, so the stream's timing marks see the delay too.
 * Combine, the layout and the results are the wrapped engine's: the
 * wrapper changes the time and nothing else, so the gates, not the
 * verification, must notice it.
 *
 * The ops table has no pointer back to itself, so each wrapped engine
 * gets a slot with its own create function; EG__SLOTS distinct
 * (amount, engine, finder) triples per process are plenty for a sweep. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/clock.h"
#include "epgate/engine.h"
#include "epgate/error.h"
#include "epgate/sized.h"

#define EG__SLOTS 16
#define EG__NAME  256

typedef struct eg__slow_slot {
	char name[EG__NAME];
	eg_engine_find_fn find; /* the finder the inner engine came from */
	const eg_engine_ops_t *inner;
	double frac, fixed_s;
	eg_engine_ops_t ops;
} eg__slow_slot_t;

typedef struct eg__slow {
	const eg__slow_slot_t *slot;
	void *inner;
	double spun_ms; /* the last dispatch's added delay */
} eg__slow_t;

static eg__slow_slot_t eg__slot[EG__SLOTS];
static size_t eg__n_slots;
static pthread_mutex_t eg__lock = PTHREAD_MUTEX_INITIALIZER;

int eg_slow_parse(const char *name, double *frac, double *fixed_s,
		  const char **inner)
{
	const char *a, *c;
	char *end;
	double v;

	if (strncmp(name, EG_SLOW_PREFIX, strlen(EG_SLOW_PREFIX)))
		return EG_EINVAL;
	a = name + strlen(EG_SLOW_PREFIX);
	c = strchr(a, ':');
	if (!c || c == a || !c[1] || !isdigit((unsigned char)*a))
		return EG_EINVAL;
	v = strtod(a, &end);
	if (!isfinite(v) || v < 0)
		return EG_EINVAL;
	*frac = 0;
	*fixed_s = 0;
	if (end + 1 == c && *end == '%' && v <= 1000)
		*frac = v / 100;
	else if (end + 2 == c && !strncmp(end, "us", 2) && v <= 1e7)
		*fixed_s = v * 1e-6;
	else
		return EG_EINVAL;
	*inner = c + 1;
	return EG_OK;
}

/* Busy until t (monotonic seconds). */
static void eg__spin_until(double t)
{
	while (eg_now() < t)
		;
}

static int eg__slow_dispatch(void *state, const eg_rank_input_t *in,
			     eg_recv_t *out)
{
	eg__slow_t *s = state;
	double t0 = eg_now(), t1;
	int rc = s->slot->inner->dispatch(s->inner, in, out);

	t1 = eg_now();
	s->spun_ms = 0;
	if (rc >= 0) {
		eg__spin_until(t1 + s->slot->frac * (t1 - t0) +
			       s->slot->fixed_s);
		s->spun_ms = (eg_now() - t1) * 1e3;
	}
	return rc;
}

static int eg__slow_combine(void *state, const eg_recv_t *recv,
			    const void *const *y, void *const *out)
{
	eg__slow_t *s = state;

	return s->slot->inner->combine(s->inner, recv, y, out);
}

static void eg__slow_destroy(void *state)
{
	eg__slow_t *s = state;

	if (!s)
		return;
	if (s->inner && s->slot->inner->destroy)
		s->slot->inner->destroy(s->inner);
	free(s);
}

#define EG__HAS(o, f) (EG_HAS((o), eg_engine_ops_t, f) && (o)->f)

static int eg__slow_phases(void *state, eg_engine_phase_t *p, size_t max)
{
	eg__slow_t *s = state;
	const eg_engine_ops_t *o = s->slot->inner;

	int n = EG__HAS(o, phases) ? o->phases(s->inner, p, max) : 0;

	/* a plugin's call boundary (its own marks) holds the delay too: the
	 * slower implementation's call is what is timed (docs/metrics.md) */
	for (int i = 0; i < n; i++)
		if (!strcmp(p[i].name, "plugin_dispatch"))
			p[i].ms += s->spun_ms;
	return n;
}

static const char *eg__slow_error(void *state)
{
	eg__slow_t *s = state;
	const eg_engine_ops_t *o = s->slot->inner;

	return EG__HAS(o, error) ? o->error(s->inner) : NULL;
}

static int eg__slow_create(size_t k, const eg_workload_t *w,
			   const eg_engine_ctx_t *ctx, void **state)
{
	const eg__slow_slot_t *slot = &eg__slot[k];
	eg__slow_t *s = calloc(1, sizeof(*s));
	int rc;

	*state = NULL;
	if (!s)
		return EG_ENOMEM;
	s->slot = slot;
	rc = slot->inner->create(w, ctx, &s->inner);
	if (rc < 0) {
		free(s);
		return rc;
	}
	*state = s;
	return rc;
}

#define EG__CREATE(k)                                                          \
	static int eg__slow_create_##k(                                        \
	    const eg_workload_t *w, const eg_engine_ctx_t *ctx, void **state)  \
	{                                                                      \
		return eg__slow_create(k, w, ctx, state);                      \
	}
EG__CREATE(0)
EG__CREATE(1)
EG__CREATE(2)
EG__CREATE(3)
EG__CREATE(4)
EG__CREATE(5)
EG__CREATE(6)
EG__CREATE(7)
EG__CREATE(8)
EG__CREATE(9)
EG__CREATE(10)
EG__CREATE(11)
EG__CREATE(12)
EG__CREATE(13)
EG__CREATE(14)
EG__CREATE(15)
#undef EG__CREATE

static int (*const eg__creates[EG__SLOTS])(const eg_workload_t *,
					   const eg_engine_ctx_t *, void **) = {
    eg__slow_create_0,	eg__slow_create_1,  eg__slow_create_2,
    eg__slow_create_3,	eg__slow_create_4,  eg__slow_create_5,
    eg__slow_create_6,	eg__slow_create_7,  eg__slow_create_8,
    eg__slow_create_9,	eg__slow_create_10, eg__slow_create_11,
    eg__slow_create_12, eg__slow_create_13, eg__slow_create_14,
    eg__slow_create_15};

/* A new slot for name over inner; NULL when all are taken. */
static const eg_engine_ops_t *eg__slot_new(const char *name,
					   eg_engine_find_fn find,
					   const eg_engine_ops_t *inner,
					   double frac, double fixed_s)
{
	eg__slow_slot_t *s;

	if (eg__n_slots == EG__SLOTS)
		return NULL;
	s = &eg__slot[eg__n_slots];
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->find = find;
	s->inner = inner;
	s->frac = frac;
	s->fixed_s = fixed_s;
	s->ops = (eg_engine_ops_t){
	    .size = sizeof(eg_engine_ops_t),
	    .name = s->name,
	    .create = eg__creates[eg__n_slots],
	    .dispatch = eg__slow_dispatch,
	    .combine = eg__slow_combine,
	    .destroy = eg__slow_destroy,
	    .flags = inner->flags,
	    .dispatch_rows = eg_engine_rows(inner),
	    .phases = eg__slow_phases,
	    .error = eg__slow_error,
	};
	eg__n_slots++;
	return &s->ops;
}

const eg_engine_ops_t *eg_engine_slow_find(const char *name,
					   eg_engine_find_fn find)
{
	const eg_engine_ops_t *inner, *ops = NULL;
	const char *iname;
	double frac, fixed_s;

	if (!name || !find || strlen(name) >= EG__NAME ||
	    eg_slow_parse(name, &frac, &fixed_s, &iname) < 0)
		return NULL;
	pthread_mutex_lock(&eg__lock);
	for (size_t i = 0; i < eg__n_slots; i++)
		if (eg__slot[i].find == find && !strcmp(eg__slot[i].name, name))
			ops = &eg__slot[i].ops;
	pthread_mutex_unlock(&eg__lock);
	if (ops)
		return ops;
	/* outside the lock: the finder may load a plugin, or wrap again */
	inner = find(iname);
	if (!inner || !inner->create || !inner->dispatch || !inner->combine)
		return NULL;
	pthread_mutex_lock(&eg__lock);
	for (size_t i = 0; i < eg__n_slots && !ops; i++)
		if (eg__slot[i].find == find && !strcmp(eg__slot[i].name, name))
			ops = &eg__slot[i].ops;
	if (!ops)
		ops = eg__slot_new(name, find, inner, frac, fixed_s);
	pthread_mutex_unlock(&eg__lock);
	return ops;
}
