/* Size-versioned structs (engine ops, contexts, options): whoever makes
 * one sets its size field, and a reader touches an appended field only
 * when that size covers it, so an older caller's shorter struct is never
 * read past (libfabric's op checks do the same). The plugin ABI has its
 * own copy, EG_PLUGIN_HAS (include/epgate/plugin.h), since a plugin
 * includes nothing else of epgate. */
#ifndef EPGATE_SIZED_H
#define EPGATE_SIZED_H

#include <stddef.h>

/* p's size covers field of its type */
#define EG_HAS(p, type, field)                                                 \
	((p)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

#endif
