/* `epgate plugin new NAME`: NAME/NAME.c (the skeleton, plugin_new.c) and
 * NAME/Makefile, and the two lines that build and check it. The header
 * is this epgate's: installed (its pkg-config file, else its include
 * folder) when the running epgate is the installed one, else the source
 * tree's include/. */
#define _XOPEN_SOURCE 700 /* PATH_MAX */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/job.h"
#include "lib/suite/plugin_cmd.h"
#include "lib/suite/suite.h"

#define EG__NAME_MAX 48

/* 1 when this process is an installed epgate (not the build tree's:
 * make install's, or one staged with DESTDIR). */
static int eg__installed(void)
{
	return eg_build_tree() == 0;
}

static int eg__name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > EG__NAME_MAX || s[0] < 'a' || s[0] > 'z')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* The Makefile: the library, and `make check` running epgate's suite. */
static int eg__makefile(const char *path, const char *name, const char *cflags,
			int installed, char *err, size_t len)
{
	char text[8192], cf[PATH_MAX + 160];
	const char *exe = eg_self_exe();
	int n;

	if (installed)
		snprintf(cf, sizeof(cf),
			 "# the installed plugin.h (pkg-config epgate)\n"
			 "EPGATE_CFLAGS ?= $(shell pkg-config --cflags epgate "
			 "2>/dev/null || echo %s)",
			 cflags);
	else
		snprintf(cf, sizeof(cf),
			 "# plugin.h of the epgate tree this was made from\n"
			 "EPGATE_CFLAGS ?= %s",
			 cflags);
	n = snprintf(text, sizeof(text),
		     "# %s: an epgate plugin (docs/plugins.md). `make` builds "
		     "libeg-%s.so,\n# `make check` runs epgate's correctness "
		     "suite on it: the L1 matrix and the\n# plugin battery "
		     "(plugin-w1.ini, plugin-l2.ini), world 1 in process, "
		     "every other\n# world as a job of ranks; `make check-l2` "
		     "the L2 matrix and the battery over\n# ranks on two "
		     "virtual nodes.\nEPGATE ?= %s\n%s\nCFLAGS ?= -O2 -g "
		     "-Wall -Wextra\n\nlibeg-%s.so: %s.c\n\t$(CC) -shared "
		     "-fPIC $(CFLAGS) $(EPGATE_CFLAGS) -o $@ %s.c\n\ncheck: "
		     "libeg-%s.so\n\t$(EPGATE) check --engine "
		     "plugin:./libeg-%s.so\n\ncheck-l2: libeg-%s.so\n\t"
		     "$(EPGATE) check --l2 --engine "
		     "plugin:$(CURDIR)/libeg-%s.so\n\nclean:\n\trm -f "
		     "libeg-%s.so\n\n.PHONY: check check-l2 clean\n",
		     name, name, installed || !exe ? "epgate" : exe, cf, name,
		     name, name, name, name, name, name, name);
	if (n < 0 || (size_t)n >= sizeof(text))
		return eg_err_set(err, len, EG_ERANGE, "%s: too long", path);
	return eg_file_write_atomic_buf(path, text, strlen(text), err, len);
}

/* DIR/NAME/, made unless there, refused if it holds a NAME.c. */
static int eg__folder(const char *dir, const char *name, char *out, size_t len,
		      char *err, size_t errlen)
{
	struct stat sb;
	char c[PATH_MAX + EG__NAME_MAX + 8];

	if (strcmp(dir, ".")
		? snprintf(out, len, "%s/%s", dir, name) >= (int)len
		: snprintf(out, len, "%s", name) >= (int)len)
		return eg_err_set(err, errlen, EG_ERANGE, "path too long");
	snprintf(c, sizeof(c), "%s/%s.c", out, name);
	if (stat(c, &sb) == 0)
		return eg_err_set(err, errlen, EG_EINVAL,
				  "%s exists: remove it, or give another NAME "
				  "or --dir",
				  c);
	if (mkdir(out, 0777) < 0 && errno != EEXIST)
		return eg_err_set(err, errlen, EG_EIO,
				  "cannot create the folder %s: %s", out,
				  strerror(errno));
	return EG_OK;
}

int eg_plugin_new(const eg_plugin_new_opts_t *o)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], cflags[PATH_MAX + 8];
	char err[PATH_MAX + 256], *src = NULL;
	const char *exe = eg_self_exe();
	int installed = eg__installed(), rc;

	if (!eg__name_ok(o->name)) {
		fprintf(stderr,
			"%s: NAME \"%s\": want [a-z][a-z0-9_-]*, at most %d "
			"characters (it names the plugin and its files)\n",
			o->prog, o->name, EG__NAME_MAX);
		return EG_EXIT_HARD;
	}
	snprintf(cflags, sizeof(cflags), "-I%s",
		 installed ? EG_INCLUDEDIR : EG_SRCDIR "/include");
	if ((rc = eg__folder(o->dir ? o->dir : ".", o->name, dir, sizeof(dir),
			     err, sizeof(err))) < 0 ||
	    (rc = eg_plugin_skeleton(eg_plugin_template_src(), o->name, &src,
				     err, sizeof(err))) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s.c", dir, o->name);
	if ((rc = eg_file_write_atomic_buf(path, src, strlen(src), err,
					   sizeof(err))) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/Makefile", dir);
	if ((rc = eg__makefile(path, o->name, cflags, installed, err,
			       sizeof(err))) < 0)
		goto out;
	fprintf(o->out,
		"%s: wrote %s/%s.c (the template of epgate %s without its "
		"planted faults) and %s/Makefile\n"
		"build: cc -shared -fPIC %s -o %s/libeg-%s.so %s/%s.c\n"
		"check: %s check --engine plugin:%s%s/libeg-%s.so\n"
		"(the L1 matrix and the plugin battery, every world size; "
		"or: make -C %s && make -C %s check)\n",
		o->prog, dir, o->name, PACKAGE_VERSION, dir, cflags, dir,
		o->name, dir, o->name, installed || !exe ? "epgate" : exe,
		dir[0] == '/' ? "" : "./", dir, o->name, dir, dir);
out:
	free(src);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", o->prog, err);
	return rc < 0 ? EG_EXIT_HARD : EG_EXIT_PASS;
}
