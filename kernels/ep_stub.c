/* The device EP entry points for builds without CUDA (Makefile.am
 * compiles this file only then): EG_ENOSYS. */
#include <string.h>

#include "epgate/cuda_ep.h"
#include "epgate/error.h"

int eg_ep_layout_cuda(const eg_workload_t *w, const eg_ep_src_t *src,
		      uint32_t d0, uint32_t nd, int32_t *d_pos,
		      uint32_t *d_count, void *stream)
{
	(void)w, (void)src, (void)d0, (void)nd, (void)d_pos, (void)d_count;
	(void)stream;
	return EG_ENOSYS;
}

int eg_ep_pack_cuda(const eg_workload_t *w, const eg_ep_src_t *src, uint32_t d0,
		    uint32_t nd, const int32_t *d_pos,
		    const eg_ep_rows_t *views, void *stream)
{
	(void)w, (void)src, (void)d0, (void)nd, (void)d_pos, (void)views;
	(void)stream;
	return EG_ENOSYS;
}

int eg_ep_pack_slice_cuda(const eg_workload_t *w, const eg_ep_src_t *src,
			  uint32_t d0, uint32_t nd, const int32_t *d_pos,
			  const eg_ep_rows_t *views, const uint32_t *counts,
			  uint32_t k, uint32_t K, void *stream)
{
	(void)w, (void)src, (void)d0, (void)nd, (void)d_pos, (void)views;
	(void)counts, (void)k, (void)K, (void)stream;
	return EG_ENOSYS;
}

int eg_ep_finish_cuda(eg_recv_t *r, const uint32_t *prefix, void *stream)
{
	(void)r, (void)prefix, (void)stream;
	return EG_ENOSYS;
}

int eg_ep_expert_cuda(const eg_gen_t *g, const eg_recv_t *r, void *d_y,
		      void *stream)
{
	(void)g, (void)r, (void)d_y, (void)stream;
	return EG_ENOSYS;
}

int eg_ep_combine_cuda(const eg_workload_t *w, uint32_t T, uint32_t W,
		       const int32_t *d_pos, uint32_t stride,
		       const void *const *y, void *d_out, void *stream)
{
	(void)w, (void)T, (void)W, (void)d_pos, (void)stride, (void)y;
	(void)d_out, (void)stream;
	return EG_ENOSYS;
}

int eg_ep_scatter_cuda(const eg_workload_t *w, const eg_recv_t *r,
		       const void *d_y, uint32_t stride, void *d_partial,
		       void *stream)
{
	(void)w, (void)r, (void)d_y, (void)stride, (void)d_partial;
	(void)stream;
	return EG_ENOSYS;
}

int eg_cuda_hold(void *stream, double us)
{
	(void)stream, (void)us;
	return EG_ENOSYS;
}

int eg_recv_alloc_cuda(eg_recv_t *r, const eg_workload_t *w, uint32_t rank,
		       uint32_t capacity)
{
	(void)w, (void)rank, (void)capacity;
	memset(r, 0, sizeof(*r));
	return EG_ENOSYS;
}

void eg_recv_free_cuda(eg_recv_t *r)
{
	memset(r, 0, sizeof(*r));
}

int eg_recv_copy_cuda(eg_recv_t *dst, const eg_recv_t *src, int to_device)
{
	(void)dst, (void)src, (void)to_device;
	return EG_ENOSYS;
}

int eg_verify_dispatch_cuda(const eg_workload_t *w, const eg_recv_t *expected,
			    const eg_recv_t *actual, eg_verdict_t *v)
{
	(void)w, (void)expected, (void)actual, (void)v;
	return EG_ENOSYS;
}

int eg_verify_combine_cuda(const eg_workload_t *w, uint32_t s,
			   eg_compare_t mode, const void *d_expected,
			   const double *d_ref64, const double *d_mag64,
			   const void *d_actual, eg_verdict_t *v)
{
	(void)w, (void)s, (void)mode, (void)d_expected, (void)d_ref64;
	(void)d_mag64, (void)d_actual, (void)v;
	return EG_ENOSYS;
}
