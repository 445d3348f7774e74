/* Freeing a struct of arrays in one statement. */
#ifndef EPGATE_MEM_H
#define EPGATE_MEM_H

#include <stddef.h>

/* free() on each of the n pointers (NULL ones are fine). */
void eg_free_all(void *const *p, size_t n);

/* EG_FREE(a->x, a->y, ...): free() on each argument, in one statement, so
 * a fini lists its arrays once instead of a line of free() for each. */
#define EG_FREE(...)                                                           \
	eg_free_all((void *const[]){__VA_ARGS__},                              \
		    sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif
