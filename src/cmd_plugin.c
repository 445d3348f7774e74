/* epgate plugin: subcommands new (a plugin from the template) and info
 * (what a plugin declares): argv -> lib/suite/plugin_write.c,
 * plugin_show.c. */
#include <stdio.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/suite/plugin_cmd.h"
#include "src/cmd.h"
#include "src/opts.h"

static const char eg__plugin_usage[] =
    "usage: epgate plugin new NAME [--dir DIR]\n"
    "       epgate plugin info SPEC [--json]\n"
    "\n"
    "Plugins put an EP library under epgate's suites (docs/plugins.md).\n"
    "  new NAME   DIR/NAME/NAME.c, a complete plugin made from epgate's\n"
    "             template, and a Makefile; prints the line that builds\n"
    "             it and the `epgate check` line that passes on it\n"
    "  info SPEC  loads plugin:PATH[,key=value...] (or PATH[,...]) and\n"
    "             prints what it declares: ABI version, library, memory,\n"
    "             layout, dtypes, flags, limits, combine order, options\n"
    "\n"
    "Exit status: 0 done, 99 bad arguments or a plugin that does not\n"
    "load (the loader's reason on stderr).\n";

static const char eg__new_usage[] =
    "usage: epgate plugin new NAME [--dir DIR]\n"
    "\n"
    "Writes DIR/NAME/NAME.c (epgate's template, plugins/template/\n"
    "template.c, renamed and without its planted faults) and\n"
    "DIR/NAME/Makefile, which builds libeg-NAME.so against this\n"
    "epgate's plugin.h (the installed one through pkg-config, or the\n"
    "source tree's); then prints the build line and the check line.\n"
    "\n"
    "  --dir DIR   where NAME/ goes (default: here)\n"
    "\n"
    "Exit status: 0 written, 99 a bad NAME, NAME/NAME.c already there,\n"
    "or a file that cannot be written.\n";

static const char eg__info_usage[] =
    "usage: epgate plugin info SPEC [--json]\n"
    "\n"
    "Loads the plugin (plugin:PATH[,key=value...], or PATH[,...]) as\n"
    "every suite loads it and prints its declaration for those\n"
    "options: ABI version and table size, the library under test\n"
    "(lib_name, lib_version, lib_build), memory, layout, dtypes,\n"
    "flags, limits, the combine order and its bound, the options it\n"
    "takes.\n"
    "\n"
    "  --json      one JSON object instead\n"
    "\n"
    "Exit status: 0 loaded, 99 it does not load (the reason on\n"
    "stderr) or bad arguments.\n";

static int eg__new(int argc, char **argv)
{
	eg_plugin_new_opts_t o = {.prog = argv[0], .out = stdout};
	const eg_cli_opt_t own[] = {{"dir", .str = &o.dir}, {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__new_usage,
		       .max_args = 1,
		       .need_arg = "give the plugin's NAME"};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	o.name = cl.arg[0];
	return eg_plugin_new(&o);
}

static int eg__info(int argc, char **argv)
{
	int json = 0;
	const eg_cli_opt_t own[] = {{"json", .flag = &json}, {NULL}};
	eg_cli_t cl = {.own = own,
		       .usage = eg__info_usage,
		       .max_args = 1,
		       .need_arg =
			   "give the plugin: plugin:PATH[,key=value...]"};
	int rc = eg_cli_parse(&cl, argc, argv);

	if (rc != EG_CLI_GO)
		return rc;
	return eg_plugin_show(argv[0], cl.arg[0], json, stdout);
}

int eg_cmd_plugin(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"%s: give a subcommand (new, info); try `epgate "
			"plugin --help`\n",
			argv[0]);
		return EG_EXIT_HARD;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(eg__plugin_usage, stdout);
		return EG_EXIT_PASS;
	}
	if (!strcmp(argv[1], "new"))
		return eg_cmd_sub(argv[0], "new", eg__new, argc - 1, argv + 1);
	if (!strcmp(argv[1], "info"))
		return eg_cmd_sub(argv[0], "info", eg__info, argc - 1,
				  argv + 1);
	fprintf(stderr,
		"%s: unknown subcommand \"%s\"; try `epgate plugin --help`\n",
		argv[0], argv[1]);
	return EG_EXIT_HARD;
}
