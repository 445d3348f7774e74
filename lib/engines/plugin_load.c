/* Loading a plugin: "plugin:PATH[,key=value...]" -> dlopen, the entry
 * symbol, the ABI version and table size checks, the plugin's
 * declaration for these options, and an engine ops table for it. Each
 * spec is loaded once per process and kept until exit (never dlclosed:
 * a library may have started threads); a failed spec keeps its reason,
 * said once. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/job.h"
#include "epgate/mem.h"
#include "lib/base/data_path.h"
#include "lib/base/watch.h"
#include "plugin_int.h"

#ifndef EG_PKGLIBDIR
#define EG_PKGLIBDIR "/usr/local/lib/epgate"
#endif

#define EG__PLUGINS_MAX EG_PLUG_SLOTS
#define EG__FAILED_MAX	EG_PLUG_SLOTS
/* ABI 1's table without its optional trailing slot (error) */
#define EG__V1_MIN_SIZE offsetof(eg_plugin_t, error)

static eg_plug_t *eg__plugins[EG__PLUGINS_MAX];
static struct {
	char *spec, *why;
	int said;
} eg__failed[EG__FAILED_MAX];

static void eg__plug_free(eg_plug_t *pl)
{
	if (!pl)
		return;
	if (pl->dl)
		dlclose(pl->dl);
	EG_FREE(pl->spec, pl->optbuf, pl->file, pl);
}

/* dir/sub/libeg-NAME.so (sub may be ""): when it exists, the file to
 * load; else it joins the list of places looked at. */
static int eg__try(eg_plug_t *pl, const char *dir, const char *sub,
		   char *looked, size_t len)
{
	char f[4096 + 256];
	size_t u = strlen(looked);

	snprintf(f, sizeof(f), "%s%s%s/libeg-%s.so", dir, *sub ? "/" : "", sub,
		 pl->path);
	if (access(f, R_OK) == 0 && (pl->file = strdup(f))) {
		pl->path = pl->file;
		return 1;
	}
	snprintf(looked + u, len - u, "%s %s", u ? "," : "", f);
	return 0;
}

/* "PATH,k=v,k=v" (after "plugin:") into path and options. */
static int eg__parse(eg_plug_t *pl, const char *body, char *err, size_t len)
{
	char *s, *save = NULL, *tok;

	pl->optbuf = strdup(body);
	if (!pl->optbuf)
		return EG_ENOMEM;
	s = pl->optbuf;
	pl->path = strtok_r(s, ",", &save);
	if (!pl->path || !*pl->path || body[0] == ',')
		return eg_err_set(err, len, EG_EINVAL,
				  "--engine plugin:%s: no path (want "
				  "plugin:PATH[,key=value...])",
				  body);
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return eg_err_set(err, len, EG_EINVAL,
					  "--engine plugin:%s: option \"%s\": "
					  "want key=value",
					  body, tok);
		if (pl->nopts == EG_PLUG_OPTS_MAX)
			return eg_err_set(err, len, EG_EINVAL,
					  "--engine plugin:%s: more than %d "
					  "options",
					  body, EG_PLUG_OPTS_MAX);
		*eq = '\0';
		pl->key[pl->nopts] = tok;
		pl->val[pl->nopts++] = eq + 1;
	}
	return EG_OK;
}

/* A plugin named without a path ("plugin:python": no '/', no ".so"),
 * docs/plugins.md "Plugins by name": libeg-NAME.so in each folder of
 * EPGATE_PLUGIN_PATH (or its NAME/ subfolder), then in plugins/NAME/
 * beside the running epgate (a build tree, a bundle), then in the
 * installed plugin folder. The first file that exists is taken; none is
 * an error listing where it looked. */
static int eg__by_name(eg_plug_t *pl, char *err, size_t len)
{
	const char *env = getenv("EPGATE_PLUGIN_PATH"), *exe = eg_self_exe();
	const char *name = pl->path;
	char looked[1024] = "", dir[4096];
	size_t n;

	if (strchr(name, '/') || strstr(name, ".so"))
		return EG_OK;
	for (const char *p = env; p && *p; p += n + (p[n] == ':')) {
		n = strcspn(p, ":");
		if (n && snprintf(dir, sizeof(dir), "%.*s", (int)n, p) > 0 &&
		    (eg__try(pl, dir, "", looked, sizeof(looked)) ||
		     eg__try(pl, dir, name, looked, sizeof(looked))))
			return EG_OK;
	}
	if (exe && strrchr(exe, '/')) {
		snprintf(dir, sizeof(dir), "%.*s/plugins",
			 (int)(strrchr(exe, '/') - exe), exe);
		if (eg__try(pl, dir, name, looked, sizeof(looked)))
			return EG_OK;
	}
	if (eg__try(pl, EG_PKGLIBDIR "/plugins", "", looked, sizeof(looked)))
		return EG_OK;
	return eg_err_set(err, len, EG_EINVAL,
			  "plugin %s: none of%s exists (EPGATE_PLUGIN_PATH "
			  "%s): give its file's path, or build it "
			  "(docs/plugins.md)",
			  name, looked, env ? "set" : "unset");
}

/* dlopen, the entry symbol, version and size. */
static int eg__open(eg_plug_t *pl, char *err, size_t len)
{
	eg_plugin_entry_fn entry;
	const eg_plugin_t *p;
	int rc;

	if ((rc = eg__by_name(pl, err, len)) < 0)
		return rc;
	dlerror();
	pl->dl = dlopen(pl->path, RTLD_NOW | RTLD_LOCAL);
	if (!pl->dl)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: cannot load: %s", pl->path,
				  dlerror());
	*(void **)&entry = dlsym(pl->dl, EG_PLUGIN_ENTRY_NAME);
	if (!entry)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: no symbol %s: not an epgate "
				  "plugin (see docs/plugins.md)",
				  pl->path, EG_PLUGIN_ENTRY_NAME);
	p = entry(EG_PLUGIN_ABI_VERSION);
	if (!p)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: %s returned no table", pl->path,
				  EG_PLUGIN_ENTRY_NAME);
	if (p->abi_version > EG_PLUGIN_ABI_VERSION)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: built for epgate plugin ABI "
				  "version %u, but this epgate speaks version "
				  "%u: rebuild it against this epgate's "
				  "include/epgate/plugin.h, or use a newer "
				  "epgate",
				  pl->path, p->abi_version,
				  EG_PLUGIN_ABI_VERSION);
	if (p->abi_version == 0)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: declares ABI version 0 (not a "
				  "version; want 1..%u)",
				  pl->path, EG_PLUGIN_ABI_VERSION);
	if (p->size < EG__V1_MIN_SIZE)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: table of %zu bytes, smaller than "
				  "ABI version 1's %zu",
				  pl->path, p->size, (size_t)EG__V1_MIN_SIZE);
	if (!p->query || !p->create || !p->dispatch || !p->combine ||
	    !p->destroy)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: query, create, dispatch, combine "
				  "and destroy are required",
				  pl->path);
	pl->p = p;
	pl->psize = p->size;
	return EG_OK;
}

/* The combine order the plugin declares (ABI 2's order, or ABI 1's
 * flag): one answer, or a refusal when the two contradict. */
static int eg__order(eg_plug_t *pl, const char *name, char *err, size_t len)
{
	const eg_plugin_caps_t *c = &pl->caps;
	int canon = (c->flags & EG_PLUGIN_CANONICAL_ORDER) != 0;

	if (c->order > EG_PLUGIN_ORDER_ANY)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: unknown combine order %u (want "
				  "EG_PLUGIN_ORDER_CANONICAL, _FIXED or _ANY)",
				  name, c->order);
	if (canon && c->order != EG_PLUGIN_ORDER_UNSTATED &&
	    c->order != EG_PLUGIN_ORDER_CANONICAL)
		return eg_err_set(
		    err, len, EG_EINVAL,
		    "plugin %s: sets the CANONICAL_ORDER flag but "
		    "declares the %s combine order",
		    name, eg_plug_order_name(c->order));
	if (!(c->order_bound >= 0) || c->order_bound > 1e6)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: order_bound %g (want 0, epgate's "
				  "bound, or a factor of it up to 1e6)",
				  name, c->order_bound);
	pl->order = c->order != EG_PLUGIN_ORDER_UNSTATED ? c->order
		    : canon ? EG_PLUGIN_ORDER_CANONICAL
			    : EG_PLUGIN_ORDER_ANY;
	return EG_OK;
}

const char *eg_plug_order_name(uint32_t order)
{
	static const char *const names[] = {"unstated", "canonical", "fixed",
					    "any"};

	return order < sizeof(names) / sizeof(names[0]) ? names[order] : "?";
}

/* The declaration, checked for what epgate can run. */
static int eg__query(eg_plug_t *pl, char *err, size_t len)
{
	eg_plugin_opts_t o = {.n = pl->nopts, .key = pl->key, .value = pl->val};
	eg_plugin_caps_t *c = &pl->caps;
	const char *name = pl->p->name ? pl->p->name : pl->path;
	char perr[EG_PLUG_ERR_MAX] = "";
	int rc;

	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	eg_watch_enter(name, "query");
	rc = pl->p->query(&o, c, perr, sizeof(perr));
	eg_watch_leave();
	if (rc != EG_PLUGIN_OK)
		return eg_err_set(err, len, EG_EINVAL, "plugin %s: %s", name,
				  perr[0] ? perr : "query failed (no message)");
	if (c->memory != EG_PLUGIN_MEM_HOST && c->memory != EG_PLUGIN_MEM_CUDA)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: unknown memory space %u", name,
				  c->memory);
	if (c->layout < EG_PLUGIN_LAYOUT_FLAT ||
	    c->layout > EG_PLUGIN_LAYOUT_EXPERT_MAJOR)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: unknown layout %u", name,
				  c->layout);
	if (!c->dtypes || (c->dtypes & ~7u))
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: dtypes 0x%x (want a set of "
				  "EG_PLUGIN_DTYPE_BIT(bf16, fp32, fp8))",
				  name, c->dtypes);
	if ((rc = eg__order(pl, name, err, len)) < 0)
		return rc;
	if (c->layout == EG_PLUGIN_LAYOUT_EXPERT_MAJOR &&
	    pl->order == EG_PLUGIN_ORDER_CANONICAL)
		return eg_err_set(err, len, EG_EINVAL,
				  "plugin %s: declares the canonical combine "
				  "order with an expert-major layout, which "
				  "rounds each copy's expert output: it cannot "
				  "hold",
				  name);
	return EG_OK;
}

static int eg__load(eg_plug_t **out, const char *spec, char *err, size_t len)
{
	eg_plug_t *pl = calloc(1, sizeof(*pl));
	int rc;

	*out = NULL;
	if (!pl || !(pl->spec = strdup(spec))) {
		free(pl);
		snprintf(err, len, "plugin: out of memory");
		return EG_ENOMEM;
	}
	if ((rc = eg__parse(pl, spec + strlen("plugin:"), err, len)) < 0 ||
	    (rc = eg__open(pl, err, len)) < 0 ||
	    (rc = eg__query(pl, err, len)) < 0) {
		eg__plug_free(pl);
		return rc;
	}
	*out = pl;
	return EG_OK;
}

static const char *eg__failed_why(const char *spec)
{
	for (int i = 0; i < EG__FAILED_MAX && eg__failed[i].spec; i++)
		if (!strcmp(eg__failed[i].spec, spec))
			return eg__failed[i].why;
	return NULL;
}

static void eg__failed_add(const char *spec, const char *why)
{
	for (int i = 0; i < EG__FAILED_MAX; i++)
		if (!eg__failed[i].spec) {
			eg__failed[i].spec = strdup(spec);
			eg__failed[i].why = strdup(why);
			return;
		}
}

const eg_engine_ops_t *eg_plug_find(const char *spec, char *err, size_t errlen)
{
	const char *why = eg__failed_why(spec);
	eg_plug_t *pl;
	int i;

	if (why) {
		snprintf(err, errlen, "%s", why);
		return NULL;
	}
	for (i = 0; i < EG__PLUGINS_MAX && eg__plugins[i]; i++)
		if (!strcmp(eg__plugins[i]->spec, spec))
			return &eg__plugins[i]->ops;
	if (i == EG__PLUGINS_MAX) {
		snprintf(err, errlen, "%s: more than %d plugins in one process",
			 spec, EG__PLUGINS_MAX);
		return NULL;
	}
	if (eg__load(&pl, spec, err, errlen) < 0) {
		eg__failed_add(spec, err);
		return NULL;
	}
	eg_plug_engine_init(pl, i);
	eg__plugins[i] = pl;
	return &pl->ops;
}

int eg_plug_say_once(const char *spec)
{
	for (int i = 0; i < EG__FAILED_MAX && eg__failed[i].spec; i++)
		if (!strcmp(eg__failed[i].spec, spec)) {
			int first = !eg__failed[i].said;
			eg__failed[i].said = 1;
			return first;
		}
	return 1;
}

eg_plug_t *eg_plug_slot(int i)
{
	return i >= 0 && i < EG__PLUGINS_MAX ? eg__plugins[i] : NULL;
}
