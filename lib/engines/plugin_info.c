/* A loaded plugin described (include/epgate/plugin_info.h): what `epgate
 * plugin info` prints and what every result of a plugin arm records of
 * the library under test. Reads the loader's plugin; changes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/plugin_info.h"
#include "plugin_int.h"

static void eg__fill(const eg_plug_t *pl, eg_plugin_info_t *out)
{
	memset(out, 0, sizeof(*out));
	out->spec = pl->spec;
	out->path = pl->path;
	out->name = pl->p->name;
	out->version = pl->p->version;
	out->abi_version = pl->p->abi_version;
	out->table_size = pl->psize;
	out->caps = pl->caps;
	out->order = pl->order;
}

static const eg_plug_t *eg__slot_of(const char *spec, size_t len)
{
	for (int i = 0; i < EG_PLUG_SLOTS; i++) {
		const eg_plug_t *pl = eg_plug_slot(i);

		if (pl && strlen(pl->spec) == len &&
		    !strncmp(pl->spec, spec, len))
			return pl;
	}
	return NULL;
}

int eg_plugin_info(const char *spec, eg_plugin_info_t *out, char *err,
		   size_t errlen)
{
	char *full = NULL;
	const eg_plug_t *pl;
	int rc = EG_OK;

	if (strncmp(spec, "plugin:", 7)) {
		if (!(full = malloc(strlen(spec) + 8)))
			return EG_ENOMEM;
		snprintf(full, strlen(spec) + 8, "plugin:%s", spec);
		spec = full;
	}
	if (!eg_plug_find(spec, err, errlen))
		rc = EG_EINVAL;
	else if (!(pl = eg__slot_of(spec, strlen(spec))))
		rc = eg_err_set(err, errlen, EG_ENOENT, "%s: not loaded", spec);
	else
		eg__fill(pl, out);
	free(full);
	return rc;
}

int eg_plugin_info_loaded(const char *engine, eg_plugin_info_t *out)
{
	const char *at = engine ? strstr(engine, "plugin:") : NULL;
	const eg_plug_t *pl = at ? eg__slot_of(at, strlen(at)) : NULL;

	if (!pl)
		return EG_ENOENT;
	eg__fill(pl, out);
	return EG_OK;
}

int eg_plugin_info_evidence(const eg_plugin_info_t *in, json_t *o)
{
	const struct {
		const char *key, *v;
	} f[] = {{"lib_name", in->caps.lib_name},
		 {"lib_version", in->caps.lib_version},
		 {"lib_build", in->caps.lib_build}};
	int bad = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v && f[i].v[0])
			bad |= json_object_set_new(o, f[i].key,
						   json_string(f[i].v));
	return bad ? EG_ENOMEM : EG_OK;
}

const char *eg_plugin_memory_name(uint32_t memory)
{
	return memory == EG_PLUGIN_MEM_CUDA ? "cuda" : "host";
}

const char *eg_plugin_layout_name(uint32_t layout)
{
	return layout == EG_PLUGIN_LAYOUT_FLAT		 ? "flat"
	       : layout == EG_PLUGIN_LAYOUT_RANK_MAJOR	 ? "rank_major"
	       : layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR ? "expert_major"
							 : "?";
}

const char *eg_plugin_order_name(uint32_t order)
{
	return eg_plug_order_name(order);
}

/* The dtypes and flags as words. */
static json_t *eg__words(uint32_t bits, const char *const *names, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (bits & (1u << i))
			json_array_append_new(a, json_string(names[i]));
	return a;
}

/* The limits; 0 is none (null). */
static json_t *eg__limits(const eg_plugin_caps_t *c)
{
	const uint32_t v[] = {c->max_world,  c->max_tokens,
			      c->max_hidden, c->max_experts,
			      c->max_topk,   c->hidden_multiple};
	const char *const k[] = {"max_world",  "max_tokens",
				 "max_hidden", "max_experts",
				 "max_topk",   "hidden_multiple"};
	json_t *o = json_object();

	for (size_t i = 0; o && i < 6; i++)
		json_object_set_new(o, k[i],
				    v[i] ? json_integer(v[i]) : json_null());
	return o;
}

json_t *eg_plugin_info_json(const eg_plugin_info_t *in)
{
	static const char *const dtypes[] = {"bf16", "fp32", "fp8"};
	static const char *const flags[] = {"canonical_order", "wants_nccl",
					    "input_idx64", "slots_any_order",
					    "capture_safe"};
	const eg_plugin_caps_t *c = &in->caps;
	json_t *lib = json_object();
	json_t *o = json_pack(
	    "{s:s, s:s, s:s?, s:s?, s:i, s:i, s:I, s:s, s:s, s:o, s:o, s:o, "
	    "s:s, s:f, s:s?}",
	    "spec", in->spec, "path", in->path, "name", in->name, "version",
	    in->version, "abi_version", (int)in->abi_version, "host_abi",
	    EG_PLUGIN_ABI_VERSION, "table_size", (json_int_t)in->table_size,
	    "memory", eg_plugin_memory_name(c->memory), "layout",
	    eg_plugin_layout_name(c->layout), "dtypes",
	    eg__words(c->dtypes, dtypes, 3), "flags",
	    eg__words(c->flags, flags, 5), "limits", eg__limits(c), "order",
	    eg_plugin_order_name(in->order), "order_bound", c->order_bound,
	    "options", c->options);

	if (!o || !lib || eg_plugin_info_evidence(in, lib) < 0) {
		json_decref(lib);
		json_decref(o);
		return NULL;
	}
	if (json_object_set_new(o, "library", lib)) { /* lib is gone */
		json_decref(o);
		return NULL;
	}
	return o;
}
