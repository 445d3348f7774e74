/* `epgate plugin info SPEC`: what a plugin declares, loaded through the
 * engine loader as every suite loads it (so a refusal is the suites'
 * refusal, word for word). Text for people, --json for tools; both from
 * eg_plugin_info_json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/plugin_info.h"
#include "lib/suite/plugin_cmd.h"

/* The words of a JSON array of strings, space-separated. */
static void eg__words(FILE *f, const json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach((json_t *)a, i, v)
	{
		fprintf(f, "%s%s", i ? " " : "", json_string_value(v));
	}
	if (!json_array_size(a))
		fputs("none", f);
	fputc('\n', f);
}

/* The limits it declares ("max_world 64, hidden_multiple 8"), or none. */
static void eg__limits(FILE *f, const json_t *lim)
{
	const char *k;
	json_t *v;
	int n = 0;

	json_object_foreach((json_t *)lim, k, v)
	{
		if (json_is_integer(v))
			fprintf(f, "%s%s %lld", n++ ? ", " : "", k,
				(long long)json_integer_value(v));
	}
	fputs(n ? "\n" : "none declared\n", f);
}

/* The options, one "key=VALUES  what" a line, indented. */
static void eg__options(FILE *f, const char *opts)
{
	if (!opts || !*opts) {
		fputs("options:  not stated\n", f);
		return;
	}
	fputs("options:\n", f);
	for (const char *s = opts; *s;) {
		size_t n = strcspn(s, "\n");

		fprintf(f, "  %.*s\n", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static void eg__text(FILE *f, const json_t *j)
{
	const json_t *lib = json_object_get(j, "library");
	const char *bound_s = json_real_value(json_object_get(j, "order_bound"))
				  ? NULL
				  : "epgate's bound";
#define EG__S(o, k) json_string_value(json_object_get(o, k))
	fprintf(f, "plugin:   %s %s (%s)\n",
		EG__S(j, "name") ? EG__S(j, "name") : "(no name)",
		EG__S(j, "version") ? EG__S(j, "version") : "",
		EG__S(j, "path"));
	fprintf(
	    f,
	    "abi:      version %lld (this epgate speaks %lld), table "
	    "of %lld bytes\n",
	    (long long)json_integer_value(json_object_get(j, "abi_version")),
	    (long long)json_integer_value(json_object_get(j, "host_abi")),
	    (long long)json_integer_value(json_object_get(j, "table_size")));
	fprintf(f, "library:  %s %s%s%s%s\n",
		EG__S(lib, "lib_name") ? EG__S(lib, "lib_name") : "not stated",
		EG__S(lib, "lib_version") ? EG__S(lib, "lib_version") : "",
		EG__S(lib, "lib_build") ? " (" : "",
		EG__S(lib, "lib_build") ? EG__S(lib, "lib_build") : "",
		EG__S(lib, "lib_build") ? ")" : "");
	fprintf(f, "memory:   %s\nlayout:   %s\ndtypes:   ", EG__S(j, "memory"),
		EG__S(j, "layout"));
	eg__words(f, json_object_get(j, "dtypes"));
	fputs("flags:    ", f);
	eg__words(f, json_object_get(j, "flags"));
	fputs("limits:   ", f);
	eg__limits(f, json_object_get(j, "limits"));
	fprintf(f, "order:    %s", EG__S(j, "order"));
	if (strcmp(EG__S(j, "order"), "canonical")) {
		if (bound_s)
			fprintf(f, ", within %s", bound_s);
		else
			fprintf(
			    f, ", within %g x epgate's bound",
			    json_real_value(json_object_get(j, "order_bound")));
	}
	fputc('\n', f);
	eg__options(f, EG__S(j, "options"));
#undef EG__S
}

int eg_plugin_show(const char *prog, const char *spec, int json, FILE *out)
{
	eg_plugin_info_t pi;
	char err[2048];
	json_t *j;
	char *s;

	if (eg_plugin_info(spec, &pi, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EG_EXIT_HARD;
	}
	if (!(j = eg_plugin_info_json(&pi))) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EG_EXIT_HARD;
	}
	if (json) {
		s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (s)
			fprintf(out, "%s\n", s);
		free(s);
	} else {
		eg__text(out, j);
	}
	json_decref(j);
	return EG_EXIT_PASS;
}
