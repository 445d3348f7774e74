/* Built-in engines by name. */
#include <stddef.h>
#include <string.h>

#include "epgate/engine.h"

#define EG__FAULT_REF(id) &eg_engine_fault_##id,
static const eg_engine_ops_t *const eg__engines[] = {
    &eg_engine_self, &eg_engine_a2a, &eg_engine_dense, &eg_engine_fault_order,
    EG_FAULT_ENGINES(EG__FAULT_REF)};
#undef EG__FAULT_REF

#define EG__N_ENGINES (sizeof(eg__engines) / sizeof(eg__engines[0]))

const eg_engine_ops_t *eg_engine_find(const char *name)
{
	for (size_t i = 0; i < EG__N_ENGINES; i++)
		if (strcmp(eg__engines[i]->name, name) == 0)
			return eg__engines[i];
	return NULL;
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
	if (!e || e->size < offsetof(eg_engine_ops_t, dispatch_rows) +
				sizeof(e->dispatch_rows))
		return EG_ROWS_NONE;
	return e->dispatch_rows;
}

eg_rows_rule_t eg_engine_rows_by_name(const char *name)
{
	return name ? eg_engine_rows(eg_engine_find(name)) : EG_ROWS_NONE;
}
