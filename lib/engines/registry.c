/* Built-in engines by name. */
#include <string.h>

#include "epgate/engine.h"

static const eg_engine_ops_t *const eg__engines[] = {
	&eg_engine_self,
};

static const char *const eg__engine_names[] = {"self", NULL};

const eg_engine_ops_t *eg_engine_find(const char *name)
{
	for (size_t i = 0; i < sizeof(eg__engines) / sizeof(eg__engines[0]);
	     i++)
		if (strcmp(eg__engines[i]->name, name) == 0)
			return eg__engines[i];
	return NULL;
}

const char *const *eg_engine_names(void)
{
	return eg__engine_names;
}
