/* What a loaded plugin declares, for `epgate plugin info` and for the
 * evidence of every result of a plugin arm (docs/plugins.md, "What a
 * plugin declares"; docs/results-v1.md, "Evidence"). */
#ifndef EPGATE_PLUGIN_INFO_H
#define EPGATE_PLUGIN_INFO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "epgate/plugin.h"

typedef struct eg_plugin_info {
	const char *spec;	    /* "plugin:PATH[,k=v...]" as loaded */
	const char *path;	    /* what was dlopen'd */
	const char *name, *version; /* the table's */
	uint32_t abi_version;	    /* the plugin's */
	size_t table_size;	    /* its table's size */
	eg_plugin_caps_t caps;	    /* its declaration for these options */
	uint32_t order;		    /* the combine order epgate holds it to */
} eg_plugin_info_t;

/* Loads spec ("plugin:PATH[,k=v...]", or PATH[,k=v...]) through the
 * engine loader (once per process) and describes it. <0 with the
 * loader's reason in err. Pointers stay valid until exit. */
int eg_plugin_info(const char *spec, eg_plugin_info_t *out, char *err,
		   size_t errlen);
/* The plugin an engine name runs ("plugin:...", also inside a wrapper
 * such as "slow:10%:plugin:..."), already loaded in this process: 0 and
 * *out, or EG_ENOENT when the name runs no plugin loaded here. Loads
 * nothing. */
int eg_plugin_info_loaded(const char *engine, eg_plugin_info_t *out);
/* The library under test as the plugin loaded it (lib_name, lib_version,
 * lib_build, those it declares) into o. */
int eg_plugin_info_evidence(const eg_plugin_info_t *in, json_t *o);
/* Everything `plugin info --json` prints. NULL on out of memory. */
json_t *eg_plugin_info_json(const eg_plugin_info_t *in);

/* Names: "host"/"cuda", "flat"/"rank_major"/"expert_major", and the
 * dtype and flag words of `plugin info`. */
const char *eg_plugin_memory_name(uint32_t memory);
const char *eg_plugin_layout_name(uint32_t layout);
/* "canonical", "fixed", "any" */
const char *eg_plugin_order_name(uint32_t order);

#endif
