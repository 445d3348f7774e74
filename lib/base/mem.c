/* Freeing a struct of arrays (include/epgate/mem.h). */
#include <stdlib.h>

#include "epgate/mem.h"

void eg_free_all(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}
