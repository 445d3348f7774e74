/* The history of campaigns (docs/results-v1.md, "History"): results files
 * kept as DIR/<profile>/<machine>/<UTC stamp>.json, one per campaign,
 * written atomically; the regression gates take the last N of a profile
 * and machine as their baseline, and the report reads the same folders.
 * Plain files: a campaign is one file to look at, copy or delete, and a
 * listing sorted by name is the series in time order (the stamps sort). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "epgate/results.h"

/* Lowercase words of s, [a-z0-9.] kept, any run of others one '-'. */
static void eg__word(const char *s, char *out, size_t len)
{
	size_t k = 0;
	int dash = 0;

	for (; *s && k + 1 < len; s++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*s);

		if (isalnum(c) || c == '.') {
			if (dash && k)
				out[k++] = '-';
			if (k + 1 < len)
				out[k++] = (char)c;
			dash = 0;
		} else {
			dash = 1;
		}
	}
	out[k] = 0;
}

/* The value of the first "key : value" line of file, or "". */
static void eg__field(const char *file, const char *key, char *out, size_t len)
{
	FILE *f = fopen(file, "r");
	char line[512];

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, key, strlen(key)) || !c)
			continue;
		while (*++c == ' ' || *c == '\t')
			;
		c[strcspn(c, "\n")] = 0;
		snprintf(out, len, "%s", c);
		break;
	}
	fclose(f);
}

/* GPU models from the NVIDIA driver's /proc files (no CUDA call):
 * "h200x2" for two NVIDIA H200, or "" without a driver. */
static void eg__gpus(char *out, size_t len)
{
	DIR *d = opendir("/proc/driver/nvidia/gpus");
	struct dirent *e;
	char model[128] = "", first[128] = "", path[600];
	unsigned n = 0;

	out[0] = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path),
			 "/proc/driver/nvidia/gpus/%s/information", e->d_name);
		eg__field(path, "Model", model, sizeof(model));
		if (!n++)
			snprintf(first, sizeof(first), "%s", model);
	}
	closedir(d);
	if (!n)
		return;
	eg__word(strncmp(first, "NVIDIA ", 7) ? first : first + 7, model,
		 sizeof(model));
	snprintf(out, len, "%sx%u", model[0] ? model : "gpu", n);
}

int eg_machine_id(char *out, size_t len)
{
	const char *env = getenv("EPGATE_MACHINE");
	char host[256] = "", cpu[256] = "", gpu[160], h[128], c[128];

	if (!out || len < 2)
		return EG_EINVAL;
	if (env && *env) {
		eg__word(env, out, len);
		return out[0] ? EG_OK : EG_EINVAL;
	}
	gethostname(host, sizeof(host) - 1);
	eg__field("/proc/cpuinfo", "model name", cpu, sizeof(cpu));
	eg__gpus(gpu, sizeof(gpu));
	eg__word(host, h, sizeof(h));
	eg__word(cpu, c, sizeof(c));
	snprintf(out, len, "%s--%s%s%s", h[0] ? h : "host", c[0] ? c : "cpu",
		 gpu[0] ? "--" : "", gpu);
	return EG_OK;
}

/* mkdir -p for the two levels under dir. */
static int eg__mkdirs(const char *path)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			return EG_EIO;
		*s = '/';
	}
	return mkdir(p, 0777) < 0 && errno != EEXIST ? EG_EIO : EG_OK;
}

/* "20261201T032417Z" from "2026-12-01T03:24:17Z". */
static void eg__stamp(const char *created, char *out, size_t len)
{
	size_t k = 0;

	for (const char *s = created; *s && k + 1 < len; s++)
		if (isalnum((unsigned char)*s))
			out[k++] = *s;
	out[k] = 0;
}

int eg_history_store(const char *dir, const eg_results_t *r,
		     const char *results_path, char *stored, size_t slen,
		     char *err, size_t errlen)
{
	const char *prof =
	    json_string_value(json_object_get(r->context, "profile"));
	const char *mach =
	    json_string_value(json_object_get(r->context, "machine"));
	const char *made =
	    json_string_value(json_object_get(r->context, "created"));
	char folder[4096], stamp[64], path[4200], *text = NULL;
	size_t len;
	int rc;

	if (!prof || !mach || !made) {
		snprintf(err, errlen,
			 "%s: context needs profile, machine and created for "
			 "the history",
			 results_path);
		return EG_EINVAL;
	}
	snprintf(folder, sizeof(folder), "%s/%s/%s", dir, prof, mach);
	if (eg__mkdirs(folder) < 0) {
		snprintf(err, errlen, "%s: cannot create: %s", folder,
			 strerror(errno));
		return EG_EIO;
	}
	eg__stamp(made, stamp, sizeof(stamp));
	snprintf(path, sizeof(path), "%s/%s.json", folder, stamp);
	for (int k = 2; access(path, F_OK) == 0 && k < 100; k++)
		snprintf(path, sizeof(path), "%s/%s-%d.json", folder, stamp, k);
	if ((rc = eg_file_read(results_path, EG_RESULTS_MAX_BYTES, &text, &len,
			       err, errlen)) < 0)
		return rc;
	rc = eg_file_write_atomic_buf(path, text, len, err, errlen);
	free(text);
	if (!rc && stored)
		snprintf(stored, slen, "%s", path);
	return rc;
}

static int eg__cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int eg_history_list(const char *dir, const char *profile, const char *machine,
		    size_t last, char ***paths, size_t *n, char *err,
		    size_t errlen)
{
	char folder[4096];
	DIR *d;
	struct dirent *e;
	char **all = NULL;
	size_t na = 0, cap = 0, from;

	*paths = NULL;
	*n = 0;
	snprintf(folder, sizeof(folder), "%s/%s/%s", dir, profile, machine);
	if (!(d = opendir(folder))) {
		if (errno == ENOENT)
			return EG_OK; /* no campaign yet */
		snprintf(err, errlen, "%s: %s", folder, strerror(errno));
		return EG_EIO;
	}
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (e->d_name[0] == '.' || l < 6 ||
		    strcmp(e->d_name + l - 5, ".json"))
			continue;
		if (na == cap) {
			char **t =
			    realloc(all, (cap ? 2 * cap : 16) * sizeof(*all));

			if (!t) {
				closedir(d);
				eg_history_free(all, na);
				return EG_ENOMEM;
			}
			all = t;
			cap = cap ? 2 * cap : 16;
		}
		if (!(all[na] = malloc(strlen(folder) + l + 2))) {
			closedir(d);
			eg_history_free(all, na);
			return EG_ENOMEM;
		}
		sprintf(all[na++], "%s/%s", folder, e->d_name);
	}
	closedir(d);
	qsort(all, na, sizeof(*all), eg__cmp_str);
	from = last && na > last ? na - last : 0;
	for (size_t i = 0; i < from; i++)
		free(all[i]);
	memmove(all, all + from, (na - from) * sizeof(*all));
	*paths = all;
	*n = na - from;
	return EG_OK;
}

void eg_history_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

int eg_history_read(const char *dir, const eg_results_t *cur, size_t last,
		    eg_results_t **out, size_t *n, char *err, size_t errlen)
{
	const char *prof =
	    json_string_value(json_object_get(cur->context, "profile"));
	const char *mach =
	    json_string_value(json_object_get(cur->context, "machine"));
	char **paths = NULL;
	size_t np = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!prof || !mach) {
		snprintf(err, errlen,
			 "%s: the context names no %s: which history?",
			 cur->path, !prof ? "profile" : "machine");
		return EG_EINVAL;
	}
	rc = eg_history_list(dir, prof, mach, last, &paths, &np, err, errlen);
	if (!rc)
		rc = eg_results_read_all(paths, np, out, n, err, errlen);
	for (size_t i = 0; *out && i < *n; i++)
		(*out)[i].history = 1;
	eg_history_free(paths, np);
	return rc;
}
