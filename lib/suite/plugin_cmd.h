/* `epgate plugin new` and `epgate plugin info` (docs/plugins.md): a new
 * plugin from the template, and what a plugin declares. Each returns an
 * automake exit code after its message. */
#ifndef EPGATE_SUITE_PLUGIN_CMD_H
#define EPGATE_SUITE_PLUGIN_CMD_H

#include <stdio.h>

typedef struct eg_plugin_new_opts {
	const char *prog; /* "epgate plugin new": every message's */
	const char *name; /* [a-z][a-z0-9_-]*: the plugin and its files */
	const char *dir;  /* where NAME/ goes; NULL: "." */
	FILE *out;	  /* what was written and the lines to run */
} eg_plugin_new_opts_t;

/* Writes DIR/NAME/NAME.c and DIR/NAME/Makefile, then prints the build
 * line and the `epgate check` line that passes on it. 0, or 99 after a
 * message naming the argument or file (NAME/ holding a NAME.c already
 * is refused). */
int eg_plugin_new(const eg_plugin_new_opts_t *o);
/* The skeleton of plugin name from the template's source src (a new
 * string in *out): the header comment its own, the planted-fault hooks
 * out, the names its. EG_EPARSE with a message when src holds a hook
 * it cannot take out. */
int eg_plugin_skeleton(const char *src, const char *name, char **out, char *err,
		       size_t errlen);
/* plugins/template/template.c as this epgate was built with it. */
const char *eg_plugin_template_src(void);

/* Loads spec and prints what it declares (json: one JSON object). 0, or
 * 99 with the loader's reason. */
int eg_plugin_show(const char *prog, const char *spec, int json, FILE *out);

#endif
