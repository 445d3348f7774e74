/* Engines by name: the built-in ones, and plugins ("plugin:PATH,..."); the
 * NCCL engines' finder too (nccl_a2a.c, nccl_dense.c, or nccl_none.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "epgate/engine.h"
#include "epgate/nccl.h"
#include "epgate/sized.h"
#include "plugin_int.h"

#define EG__FAULT_REF(id) &eg_engine_fault_##id,
static const eg_engine_ops_t *const eg__engines[] = {
    &eg_engine_self,
    &eg_engine_a2a,
    &eg_engine_dense,
    &eg_engine_fault_order,
    &eg_engine_fault_route_cache,
    &eg_engine_fault_tail,
    &eg_engine_fault_shift,
    EG_FAULT_ENGINES(EG__FAULT_REF)};
#undef EG__FAULT_REF

#define EG__N_ENGINES (sizeof(eg__engines) / sizeof(eg__engines[0]))
#define EG__PLUGIN    "plugin:"

const eg_engine_ops_t *eg_engine_lookup(const char *name, char *err,
					size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!strncmp(name, EG__PLUGIN, strlen(EG__PLUGIN))) {
		char buf[EG_PLUG_ERR_MAX];

		if (!err || !errlen) {
			err = buf;
			errlen = sizeof(buf);
		}
		return eg_plug_find(name, err, errlen);
	}
	if (!strncmp(name, EG_SLOW_PREFIX, strlen(EG_SLOW_PREFIX))) {
		const eg_engine_ops_t *o =
		    eg_engine_slow_find(name, eg_engine_find);

		if (!o && err && errlen)
			snprintf(err, errlen,
				 "\"%s\": want slow:N%%:ENGINE or "
				 "slow:Nus:ENGINE with a known ENGINE",
				 name);
		return o;
	}
	for (size_t i = 0; i < EG__N_ENGINES; i++)
		if (strcmp(eg__engines[i]->name, name) == 0)
			return eg__engines[i];
	if (err && errlen)
		snprintf(err, errlen, "unknown engine \"%s\"", name);
	return NULL;
}

const eg_engine_ops_t *eg_engine_find(const char *name)
{
	char err[EG_PLUG_ERR_MAX];
	const eg_engine_ops_t *ops = eg_engine_lookup(name, err, sizeof(err));

	if (!ops && !strncmp(name, EG__PLUGIN, strlen(EG__PLUGIN)) &&
	    eg_plug_say_once(name))
		fprintf(stderr, "epgate: %s\n", err);
	return ops;
}

void eg_engine_say_unknown(const char *prog, const char *name)
{
	if (strncmp(name, EG__PLUGIN, strlen(EG__PLUGIN)))
		fprintf(stderr, "%s: --engine: unknown engine \"%s\"\n", prog,
			name);
}

const char *eg_engine_error(const eg_engine_ops_t *ops, void *state)
{
	if (!ops)
		return NULL;
	if (!state)
		return eg_plug_create_error(ops);
	if (!EG_HAS(ops, eg_engine_ops_t, error) || !ops->error)
		return NULL;
	return ops->error(state);
}

const char *const *eg_engine_names(void)
{
	static const char *names[EG__N_ENGINES + 1];
	for (size_t i = 0; i < EG__N_ENGINES; i++)
		names[i] = eg__engines[i]->name;
	names[EG__N_ENGINES] = NULL;
	return names;
}

eg_rows_rule_t eg_engine_rows(const eg_engine_ops_t *e)
{
	if (!e || !EG_HAS(e, eg_engine_ops_t, dispatch_rows))
		return EG_ROWS_NONE;
	return e->dispatch_rows;
}

double eg_engine_combine_bound(const eg_engine_ops_t *e)
{
	if (!e || !EG_HAS(e, eg_engine_ops_t, combine_bound) ||
	    !(e->combine_bound > 0))
		return 1.0;
	return e->combine_bound;
}

eg_rows_rule_t eg_engine_rows_by_name(const char *name)
{
	return name ? eg_engine_rows(eg_engine_find(name)) : EG_ROWS_NONE;
}

const eg_engine_ops_t *eg_engine_nccl_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "a2a") || !strcmp(name, "nccl-a2a"))
		return &eg_engine_nccl_a2a;
	if (!strcmp(name, "dense") || !strcmp(name, "nccl-dense"))
		return &eg_engine_nccl_dense;
	/* a library under test on GPU memory (docs/plugins.md) */
	if (!strncmp(name, EG__PLUGIN, strlen(EG__PLUGIN)))
		return eg_engine_find(name);
	/* a planted slowdown of one of these (lib/engines/slow.c) */
	if (!strncmp(name, EG_SLOW_PREFIX, strlen(EG_SLOW_PREFIX)))
		return eg_engine_slow_find(name, eg_engine_nccl_find);
	return NULL;
}
