/* The libraries this process has loaded, as they say their versions at
 * run time: a library is found among the objects mapped now
 * (dl_iterate_phdr), opened again without loading anything
 * (RTLD_NOLOAD) and asked through its own version call. So the answer is
 * the libnccl a plugin pulled in, not the nccl.h epgate was built with;
 * a library nobody loaded is "not loaded". And the environment knobs
 * results record. */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "epgate/error.h"
#include "epgate/evidence.h"

typedef struct eg__find {
	const char *stem; /* "libnccl.so": a file name starting so */
	char path[4096];
} eg__find_t;

static int eg__phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	eg__find_t *f = data;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : 0;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (!base || strncmp(base, f->stem, strlen(f->stem)))
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
	return 1;
}

/* A handle of the loaded library whose file name starts with stem, or
 * NULL when none is mapped (dlclose it after use). */
static void *eg__loaded(const char *stem)
{
	eg__find_t f = {.stem = stem};

	if (!dl_iterate_phdr(eg__phdr, &f))
		return NULL;
	return dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD);
}

static void eg__nccl(char *out, size_t len)
{
	void *h = eg__loaded("libnccl.so");
	int (*get)(int *) = NULL;
	int v = 0;

	snprintf(out, len, EG_NOT_LOADED);
	if (h)
		*(void **)&get = dlsym(h, "ncclGetVersion");
	if (get && get(&v) == 0 && v > 0) /* 2.9 on: MMmmPP, before MMmP */
		snprintf(out, len, "%d.%d.%d",
			 v >= 10000 ? v / 10000 : v / 1000,
			 v >= 10000 ? v / 100 % 100 : v / 100 % 10, v % 100);
	if (h)
		dlclose(h);
}

static void eg__libfabric(char *out, size_t len)
{
	void *h = eg__loaded("libfabric.so");
	uint32_t (*ver)(void) = NULL;

	snprintf(out, len, EG_NOT_LOADED);
	if (h)
		*(void **)&ver = dlsym(h, "fi_version");
	if (ver) {
		uint32_t v = ver();

		snprintf(out, len, "%u.%u", v >> 16, v & 0xffffu);
	}
	if (h)
		dlclose(h);
}

static void eg__nvshmem(char *out, size_t len)
{
	void *h = eg__loaded("libnvshmem");
	void (*ver)(int *, int *) = NULL;
	int major = 0, minor = 0;

	snprintf(out, len, EG_NOT_LOADED);
	if (h)
		*(void **)&ver = dlsym(h, "nvshmem_info_get_version");
	if (ver) {
		ver(&major, &minor);
		snprintf(out, len, "%d.%d", major, minor);
	}
	if (h)
		dlclose(h);
}

/* CUDA's versions are MMMmm: 12080 is 12.8. */
static void eg__cuda_ver(char *out, size_t len, int v)
{
	snprintf(out, len, "%d.%d", v / 1000, v % 1000 / 10);
}

static void eg__cuda(eg_loaded_t *l)
{
	void *h = eg__loaded("libcuda.so");
	int (*drv)(int *) = NULL;
	int v = 0;

	snprintf(l->cuda, sizeof(l->cuda), EG_NOT_LOADED);
#ifdef HAVE_CUDA /* the runtime is linked in: a plain call, no init */
	if (cudaRuntimeGetVersion(&v) == cudaSuccess && v > 0)
		eg__cuda_ver(l->cuda, sizeof(l->cuda), v);
#endif
	snprintf(l->cuda_driver, sizeof(l->cuda_driver), EG_NOT_LOADED);
	if (h)
		*(void **)&drv = dlsym(h, "cuDriverGetVersion");
	if (drv && drv(&v) == 0 && v > 0)
		eg__cuda_ver(l->cuda_driver, sizeof(l->cuda_driver), v);
	if (h)
		dlclose(h);
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  ..." */
static void eg__driver(char *out, size_t len)
{
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	char line[512];
	const char *k;

	snprintf(out, len, "none");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (k = strstr(line, "Module"))) {
		k += strspn(k + 6, " ") + 6;
		snprintf(out, len, "%.*s", (int)strcspn(k, " \n"), k);
	}
	fclose(f);
}

void eg_loaded_read(eg_loaded_t *l)
{
	memset(l, 0, sizeof(*l));
	if (gethostname(l->host, sizeof(l->host) - 1) != 0)
		snprintf(l->host, sizeof(l->host), "unknown");
	eg__nccl(l->nccl, sizeof(l->nccl));
	eg__libfabric(l->libfabric, sizeof(l->libfabric));
	eg__nvshmem(l->nvshmem, sizeof(l->nvshmem));
	eg__cuda(l);
	eg__driver(l->driver, sizeof(l->driver));
}

void eg_gpu_name(int dev, char *out, size_t len)
{
#ifdef HAVE_CUDA
	struct cudaDeviceProp p;

	if (len)
		out[0] = '\0';
	if (dev >= 0 && cudaGetDeviceProperties(&p, dev) == cudaSuccess)
		snprintf(out, len, "%s", p.name);
#else
	(void)dev;
	if (len)
		out[0] = '\0';
#endif
}

int eg_loaded_to_json(const eg_loaded_t *l, json_t *o)
{
	const struct {
		const char *key, *v;
	} f[] = {{"host", l->host},
		 {"gpu", l->gpu},
		 {"nccl", l->nccl},
		 {"libfabric", l->libfabric},
		 {"nvshmem", l->nvshmem},
		 {"cuda", l->cuda},
		 {"cuda_driver", l->cuda_driver},
		 {"driver", l->driver}};
	int bad = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v[0])
			bad |= json_object_set_new(o, f[i].key,
						   json_string(f[i].v));
	return bad ? EG_ENOMEM : EG_OK;
}

int eg_env_knob(const char *name)
{
	static const char *const prefixes[] = {
	    "NCCL_", "FI_", "NVSHMEM_", "EPGATE_", "EP_", "UCX_", NULL};

	if (!strcmp(name, "EPGATE_SECRET")) /* the job's, not a knob */
		return 0;
	if (!strcmp(name, "CUDA_VISIBLE_DEVICES"))
		return 1;
	for (int i = 0; prefixes[i]; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

int eg_env_knobs(json_t *env)
{
	extern char **environ;
	int bad = 0;

	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char key[128];

		if (!eq || (size_t)(eq - *e) >= sizeof(key))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(eq - *e), *e);
		if (eg_env_knob(key))
			bad |=
			    json_object_set_new(env, key, json_string(eq + 1));
	}
	return bad ? EG_ENOMEM : EG_OK;
}
