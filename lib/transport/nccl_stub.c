/* The NCCL entry points (nccl.h, nccl_raw.h) for builds without CUDA or
 * NCCL (Makefile.am builds this file instead of lib/transport/nccl.c):
 * they return EG_ENOSYS, saying so in err, and no communicator exists. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>

#include "epgate/error.h"
#include "epgate/nccl.h"
#include "epgate/nccl_raw.h"

#define EG__NONE "built without CUDA and NCCL"

/* Why nothing opens: one message for every entry point. */
static int eg__none(char *err, size_t errlen)
{
	snprintf(err, errlen, EG__NONE);
	return EG_ENOSYS;
}

/* ---- nccl.h ---- */

int eg_nccl_open(eg_nccl_t **out, const eg_world_t *w, eg_boot_t *b,
		 const eg_nccl_opts_t *o, char *err, size_t errlen)
{
	(void)w, (void)b, (void)o;
	*out = NULL;
	return eg__none(err, errlen);
}

void eg_nccl_close(eg_nccl_t *n)
{
	(void)n;
}

const char *eg_nccl_error(const eg_nccl_t *n)
{
	(void)n;
	return EG__NONE;
}

/* There is never a communicator to ask about: no device, comm or
 * stream. */
int eg_nccl_device(const eg_nccl_t *n)
{
	(void)n;
	return -1;
}

void *eg_nccl_comm(const eg_nccl_t *n, uint32_t k)
{
	(void)n, (void)k;
	return NULL;
}

void *eg_nccl_stream(const eg_nccl_t *n, uint32_t k)
{
	(void)n, (void)k;
	return NULL;
}

static int eg__x_create(const eg_world_t *w, eg_boot_t *b,
			const eg_xport_opts_t *xo, void **state, char *err,
			size_t errlen)
{
	(void)w, (void)b, (void)xo;
	*state = NULL;
	return eg__none(err, errlen);
}

const eg_xport_ops_t eg_xport_nccl = {
    .size = sizeof(eg_xport_ops_t),
    .name = "nccl",
    .create = eg__x_create,
};

/* ---- nccl_raw.h ---- */

int eg_nccl_raw_open(eg_nccl_raw_t **r, const eg_world_t *w, eg_boot_t *b,
		     const eg_nccl_raw_opts_t *o, char *err, size_t errlen)
{
	(void)w, (void)b, (void)o;
	*r = NULL;
	return eg__none(err, errlen);
}

const char *eg_nccl_raw_impl(const eg_nccl_raw_t *r)
{
	(void)r;
	return "none";
}

const char *eg_nccl_raw_version(const eg_nccl_raw_t *r)
{
	(void)r;
	return "none";
}

int eg_nccl_raw_device(const eg_nccl_raw_t *r)
{
	(void)r;
	return -1;
}

int eg_nccl_raw_size(eg_nccl_raw_t *r, size_t S, eg_nccl_raw_row_t *row,
		     char *err, size_t errlen)
{
	(void)r, (void)S, (void)row;
	return eg__none(err, errlen);
}

int eg_nccl_raw_path(eg_nccl_raw_t *r, char *via, size_t vlen, char *why,
		     size_t wlen)
{
	(void)r;
	snprintf(via, vlen, "none");
	return eg__none(why, wlen);
}

void eg_nccl_raw_close(eg_nccl_raw_t *r)
{
	(void)r;
}
