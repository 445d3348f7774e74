/* The NCCL EP adapter's options and shape checks (shape.h). Every limit
 * here is one NCCL EP 0.1.0 (NCCL 2.30.7) enforces with an assert, a
 * throw or exit(), or a kernel that traps: docs/plugins.md lists them
 * with their reasons. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shape.h"

/* LL kernels are instantiated for these hidden sizes only. */
static const uint32_t eg__ll_hidden[] = {2048, 2560, 4096, 5120,
					 6144, 7168, 8192};
#define EG__LL_TOPK_MAX	   9	/* LL kernels: kNumMaxTopK */
#define EG__LL_GROUPS_MAX  14	/* LL: ceil(E / SMs) warp groups */
#define EG__HT_TOKENS_MAX  8192 /* MAX_SUPPORTED_TOKENS_PER_RANK */
#define EG__HT_HIDDEN_MAX  16384
#define EG__HT_TOPK_MAX	   32
#define EG__HT_LOCAL_MAX   1024	 /* NUM_MAX_LOCAL_EXPERTS */
#define EG__EXPERTS_MAX	   65535 /* expert ids travel as 16 bits */
#define EG__WORLD_MAX	   64	 /* RELEASE.md: 8 nodes x 8 GPUs */
#define EG__NODE_RANKS_MAX 8

static int eg__u32(const char *v, uint32_t *out)
{
	char *end;
	unsigned long x;

	if (!v || *v < '0' || *v > '9')
		return -1;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x > 0x7fffffffUL)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

int eg_nep_opts_parse(const eg_plugin_opts_t *o, eg_nep_opts_t *out, char *err,
		      size_t len)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; o && i < o->n; i++) {
		const char *k = o->key[i], *v = o->value[i];
		int bad = 0;

		if (!strcmp(k, "mode") && !strcmp(v, "ll"))
			out->mode = EG_NEP_LL;
		else if (!strcmp(k, "mode") && !strcmp(v, "ht"))
			out->mode = EG_NEP_HT;
		else if (!strcmp(k, "sms"))
			bad = eg__u32(v, &out->sms);
		else if (!strcmp(k, "qps"))
			bad = eg__u32(v, &out->qps);
		else if (!strcmp(k, "recv"))
			bad = eg__u32(v, &out->recv);
		else
			bad = 1;
		if (bad) {
			snprintf(err, len,
				 "option %s=%s: want mode=ll|ht, sms=N, "
				 "qps=N or recv=N (N a whole number)",
				 k, v);
			return EG_PLUGIN_EFAIL;
		}
	}
	return EG_PLUGIN_OK;
}

void eg_nep_caps(const eg_nep_opts_t *o, eg_plugin_caps_t *c)
{
	int ht = o->mode == EG_NEP_HT;

	c->memory = EG_PLUGIN_MEM_CUDA;
	/* LL: [L, W*B, H] with per-expert counters; HT: flat rows with
	 * their received top-k ids (local experts ascending) */
	c->layout = ht ? EG_PLUGIN_LAYOUT_FLAT : EG_PLUGIN_LAYOUT_EXPERT_MAJOR;
	c->dtypes = EG_PLUGIN_DTYPE_BIT(EG_PLUGIN_DTYPE_BF16);
	/* no canonical combine order: NCCL EP does not promise one.
	 * Capture-safe (NVIDIA/nccl 5067397c, contrib/nccl_ep): the handle
	 * is made at the first call, outside any capture (nccl_ep.h: "all
	 * Handles must be created before the beginning of the CUDA graph
	 * capture"), and a call of the same epoch touches no handle;
	 * ep_test -g captures dispatch, complete and combine; HT skips its
	 * host readback of the received count while capturing (copies the
	 * bound instead); LL flips a host-side buffer index at each
	 * dispatch and combine, which a capture of each keeps in step (the
	 * verified replays check it) */
	c->flags = EG_PLUGIN_WANTS_NCCL | EG_PLUGIN_INPUT_IDX64 |
		   EG_PLUGIN_CAPTURE_SAFE |
		   (ht ? EG_PLUGIN_SLOTS_ANY_ORDER : 0);
	c->max_world = EG__WORLD_MAX;
	c->max_tokens = ht ? EG__HT_TOKENS_MAX : 0;
	c->max_hidden = ht ? EG__HT_HIDDEN_MAX : 8192;
	c->max_experts = EG__EXPERTS_MAX;
	c->max_topk = ht ? EG__HT_TOPK_MAX : EG__LL_TOPK_MAX;
	c->hidden_multiple = ht ? 8 : 128;
	/* the library under test, for the evidence (lib_name): an evidence
	 * gate can then say NCCL EP ran */
	c->lib_name = "NCCL EP";
}

static int eg__why(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int eg__why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return EG_PLUGIN_ENOTSUP;
}

/* Checks of both modes. */
static int eg__common(const eg_nep_opts_t *o, const eg_nep_shape_t *s,
		      char *why, size_t len)
{
	if (o->sms && s->device_sms && o->sms > s->device_sms)
		return eg__why(why, len, "sms=%u: the device has %u SMs",
			       o->sms, s->device_sms);
	if (s->dtype != EG_PLUGIN_DTYPE_BF16)
		return eg__why(why, len, "NCCL EP moves bf16 only");
	if (!s->world || s->world > EG__WORLD_MAX)
		return eg__why(why, len, "NCCL EP runs 1 to %d ranks, not %u",
			       EG__WORLD_MAX, s->world);
	if (!s->experts || s->experts % s->world)
		return eg__why(why, len,
			       "experts %u not divisible by the %u ranks",
			       s->experts, s->world);
	if (s->experts > EG__EXPERTS_MAX)
		return eg__why(why, len,
			       "NCCL EP carries expert ids in 16 bits: at "
			       "most %d experts, not %u",
			       EG__EXPERTS_MAX, s->experts);
	if (!s->topk)
		return eg__why(why, len, "top-k 0");
	return EG_PLUGIN_OK;
}

static int eg__ll(const eg_nep_opts_t *o, const eg_nep_shape_t *s,
		  eg_nep_plan_t *p, char *why, size_t len)
{
	size_t nh = sizeof(eg__ll_hidden) / sizeof(eg__ll_hidden[0]), i;
	uint32_t sms = o->sms ? o->sms : s->device_sms;

	for (i = 0; i < nh && eg__ll_hidden[i] != s->hidden; i++)
		;
	if (i == nh)
		return eg__why(why, len,
			       "LL kernels exist for hidden 2048, 2560, 4096, "
			       "5120, 6144, 7168, 8192 only, not %u",
			       s->hidden);
	if (s->topk > EG__LL_TOPK_MAX)
		return eg__why(why, len, "LL takes top-k <= %d, not %u",
			       EG__LL_TOPK_MAX, s->topk);
	if (s->experts < 2)
		return eg__why(why, len,
			       "LL needs 2 experts or more (with 1 its "
			       "kernel traps the GPU)");
	if (sms && (s->experts + sms - 1) / sms > EG__LL_GROUPS_MAX)
		return eg__why(why, len,
			       "LL needs experts / SMs <= %d: %u experts "
			       "on %u SMs",
			       EG__LL_GROUPS_MAX, s->experts, sms);
	/* (B x L) % 4 == 0: B is ours to choose, at least the most
	 * tokens of any rank */
	p->B = s->max_tokens ? s->max_tokens : 1;
	while ((uint64_t)p->B * p->L % 4)
		p->B++;
	p->stride = s->world * p->B;
	p->qps = o->qps ? o->qps : p->L;
	p->recv = o->recv; /* 0: NCCL EP's, world x B */
	return EG_PLUGIN_OK;
}

static int eg__ht(const eg_nep_opts_t *o, const eg_nep_shape_t *s,
		  eg_nep_plan_t *p, char *why, size_t len)
{
	p->B = s->max_tokens ? s->max_tokens : 1;
	if (p->B > EG__HT_TOKENS_MAX)
		return eg__why(why, len,
			       "HT takes at most %d tokens per rank, not %u",
			       EG__HT_TOKENS_MAX, p->B);
	if (s->hidden % 8 || s->hidden > EG__HT_HIDDEN_MAX)
		return eg__why(why, len,
			       "HT needs hidden a multiple of 8 (16-byte "
			       "rows) and at most %d, not %u",
			       EG__HT_HIDDEN_MAX, s->hidden);
	if (s->topk > EG__HT_TOPK_MAX)
		return eg__why(why, len, "HT takes top-k <= %d, not %u",
			       EG__HT_TOPK_MAX, s->topk);
	if (p->L > EG__HT_LOCAL_MAX)
		return eg__why(why, len,
			       "HT takes at most %d experts per rank, not %u",
			       EG__HT_LOCAL_MAX, p->L);
	if (s->lsa > EG__NODE_RANKS_MAX)
		return eg__why(why, len,
			       "NCCL EP takes at most %d GPUs per NVLink "
			       "domain, not %u",
			       EG__NODE_RANKS_MAX, s->lsa);
	if (s->lsa && (uint64_t)p->L * s->lsa % 4)
		return eg__why(why, len,
			       "HT needs local experts x ranks per NVLink "
			       "domain (%u x %u) to be a multiple of 4",
			       p->L, s->lsa);
	/* the flat layout's dispatch asserts (max_dispatch_tokens_per_rank x
	 * ranks per NVLink domain) % 4 == 0 (hybridep_adapter.cu,
	 * dispatch_impl: the sparse-to-dense map is fetched in 16-byte
	 * copies): B is ours to choose, at least the most tokens of any
	 * rank; with the domain unknown, a multiple of 4 fits any */
	while ((uint64_t)p->B * (s->lsa ? s->lsa : 1) % 4)
		p->B++;
	p->recv = o->recv ? o->recv : s->world * p->B;
	if (p->recv < p->B)
		return eg__why(why, len,
			       "recv=%u: below max_dispatch_tokens_per_rank %u "
			       "(the most tokens of any rank, %u, rounded up "
			       "so that it times the %u ranks per NVLink "
			       "domain is a multiple of 4)",
			       p->recv, p->B, s->max_tokens,
			       s->lsa ? s->lsa : 1);
	/* its internode contexts: two per SM (16 SMs by default) */
	if (o->qps && o->qps < 2 * (o->sms ? o->sms : 16))
		return eg__why(why, len,
			       "HT needs qps >= 2 x its SMs (%u), not %u",
			       2 * (o->sms ? o->sms : 16), o->qps);
	p->stride = p->recv;
	p->qps = o->qps;
	return EG_PLUGIN_OK;
}

int eg_nep_plan(const eg_nep_opts_t *o, const eg_nep_shape_t *s,
		eg_nep_plan_t *p, char *why, size_t len)
{
	int rc = eg__common(o, s, why, len);

	memset(p, 0, sizeof(*p));
	if (rc != EG_PLUGIN_OK)
		return rc;
	p->L = s->experts / s->world;
	p->sms = o->sms;
	return o->mode == EG_NEP_HT ? eg__ht(o, s, p, why, len)
				    : eg__ll(o, s, p, why, len);
}

/* ---- HT's run-time compiler ---- */

static const char *eg__env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* An executable file: a path, or a name searched on PATH. */
static int eg__exe(const char *f)
{
	const char *path = eg__env("PATH");
	char buf[4096];

	if (strchr(f, '/'))
		return access(f, X_OK) == 0;
	while (path && *path) {
		size_t n = strcspn(path, ":");

		int w = snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, f);

		if (n && w > 0 && (size_t)w < sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

/* The headers HT's JIT reads: the directory is var's value, or var2's
 * with suffix. */
static const struct eg__jit_dir {
	const char *what, *var, *var2, *suffix, *file;
} eg__jit_dirs[] = {
    {"NCCL EP", "NCCL_EP_JIT_SOURCE_DIR", "NCCL_EP_HOME", "/include/nccl_ep",
     "common.hpp"},
    {"NCCL", "NCCL_EP_JIT_BUILD_INCLUDE_DIR", "NCCL_HOME", "/include",
     "nccl_device.h"},
    {"CUDA", "NCCL_EP_JIT_CUDA_INCLUDE_DIR", "CUDA_HOME", "/include",
     "cuda_runtime.h"},
};

/* dir/file exists, dir from d's variables; 1 when neither is set (the
 * library's built-in default). */
static int eg__dir_has(const struct eg__jit_dir *d, char *dir, size_t len)
{
	char f[4096];
	int w;

	if (eg__env(d->var))
		snprintf(dir, len, "%s", eg__env(d->var));
	else if (eg__env(d->var2))
		snprintf(dir, len, "%s%s", eg__env(d->var2), d->suffix);
	else
		return 1;
	w = snprintf(f, sizeof(f), "%s/%s", dir, d->file);
	return w > 0 && (size_t)w < sizeof(f) && access(f, R_OK) == 0;
}

static const char *eg__nvcc(char *buf, size_t len)
{
	const char *home =
	    eg__env("CUDA_HOME") ? eg__env("CUDA_HOME") : eg__env("CUDA_PATH");

	if (eg__env("NCCL_EP_JIT_NVCC"))
		return eg__env("NCCL_EP_JIT_NVCC");
	if (eg__env("NVCC"))
		return eg__env("NVCC");
	if (home) {
		int w = snprintf(buf, len, "%s/bin/nvcc", home);

		if (w > 0 && (size_t)w < len && access(buf, F_OK) == 0)
			return buf;
	}
	return "nvcc";
}

int eg_nep_jit_ready(char *why, size_t len)
{
	char nv[4096], dir[4096] = "";
	const char *nvcc = eg__nvcc(nv, sizeof(nv));

	if (!eg__exe(nvcc))
		return eg__why(why, len,
			       "HT compiles its kernels with nvcc at run time "
			       "(NCCL EP's JIT) and finds no %s: set "
			       "NCCL_EP_JIT_NVCC or CUDA_HOME, or put nvcc on "
			       "PATH (the bundle's env.sh does)",
			       nvcc);
	for (size_t i = 0; i < sizeof(eg__jit_dirs) / sizeof(eg__jit_dirs[0]);
	     i++) {
		const struct eg__jit_dir *d = &eg__jit_dirs[i];

		if (!eg__dir_has(d, dir, sizeof(dir)))
			return eg__why(why, len,
				       "HT's JIT reads %s's headers from %s, "
				       "which has no %s (%s, %s)",
				       d->what, dir, d->file, d->var, d->var2);
	}
	return EG_PLUGIN_OK;
}
