/* EP kernels on the GPU (kernels/ep.cu, the verifier kernels/verify.cu) and
 * their host twins (lib/core/ep_host.c): layout, pack, receive finishing,
 * expert stage, combine, the dense engine's scatter, and a device verifier.
 * Every kernel produces the same bits as its twin (no FMA contraction on either
 * side, fp32 accumulation in the same order); suites/gpu/test_ep_cuda compares
 * them element for element.
 *
 * Device functions take device pointers, run on stream (a cudaStream_t or
 * NULL) and do not synchronize, except the verifiers, which return their
 * verdict. Without CUDA they return EG_ENOSYS (kernels/ep_stub.c). The
 * kernels take at most EG_EP_WORLD_MAX sources or destinations per call
 * (EG_ERANGE beyond). */
#ifndef EPGATE_CUDA_EP_H
#define EPGATE_CUDA_EP_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/ep.h"
#include "epgate/verify.h"

#define EG_EP_WORLD_MAX 64

/* cudaFree on each of the n device pointers (NULL ones are fine); CUDA
 * builds only. */
void eg_cuda_free_all(void *const *p, size_t n);

/* EG_CUDA_FREE(a->x, a->y, ...): cudaFree on each argument, in one
 * statement, like include/epgate/mem.h's EG_FREE. C only: C++ has no
 * compound literal (kernels/ep.cu passes an array). */
#define EG_CUDA_FREE(...)                                                      \
	eg_cuda_free_all((void *const[]){__VA_ARGS__},                         \
			 sizeof((void *const[]){__VA_ARGS__}) /                \
			     sizeof(void *))

/* Rows in sections. A wire buffer of n rows (what a2a sends to one
 * destination) is x | scales | src_token | topk_idx | topk_w, each section
 * starting on a 16-byte boundary; a view of a receive buffer at a row
 * offset has the same shape plus src_rank. Sections are contiguous per
 * row range, so any slice of rows is one message per section. */
typedef struct eg_ep_rows {
	void *x;	    /* n * hidden payload elements */
	float *scales;	    /* fp8: n * hidden/128, else NULL */
	int32_t *src_rank;  /* NULL in a wire buffer */
	int32_t *src_token; /* n */
	int32_t *topk_idx;  /* n * topk: local id on the destination, -1 */
	float *topk_w;	    /* n * topk: 0 where topk_idx is -1 */
} eg_ep_rows_t;

size_t eg_ep_wire_bytes(const eg_workload_t *w, uint32_t n);
/* Carves n rows out of base (eg_ep_wire_bytes(w, n) bytes). */
void eg_ep_rows_wire(const eg_workload_t *w, void *base, uint32_t n,
		     eg_ep_rows_t *v);
/* The rows of r starting at row (host or device arrays alike). */
void eg_ep_rows_recv(const eg_recv_t *r, uint32_t row, eg_ep_rows_t *v);
/* v advanced by n rows. */
void eg_ep_rows_advance(const eg_workload_t *w, eg_ep_rows_t *v, uint32_t n);
/* Bytes per row of each section, in wire order (x, scales, src_token,
 * topk_idx, topk_w); scales is 0 unless fp8. */
void eg_ep_section_bytes(const eg_workload_t *w, size_t b[5]);

/* Tokens of nsrc sources: source s's token t is row s * stride + t of x,
 * scales, topk_idx (global expert ids) and topk_w; tokens[s] <= stride.
 * a2a packs one source (its own input); dense selects from all gathered
 * sources. */
typedef struct eg_ep_src {
	const void *x;
	const float *scales;
	const int32_t *topk_idx;
	const float *topk_w;
	uint32_t nsrc, stride; /* stride >= 1 */
	uint32_t first_src;    /* rank of source 0 */
	uint32_t tokens[EG_EP_WORLD_MAX];
} eg_ep_src_t;

/* Layout for destinations d0 .. d0+nd-1: pos[(s*nd + j)*stride + t] is
 * the place of token t of source s among the tokens of s that have an
 * expert on d0+j (tokens ascending), or -1; count[s*nd + j] how many. */
int eg_ep_layout_cuda(const eg_workload_t *w, const eg_ep_src_t *src,
		      uint32_t d0, uint32_t nd, int32_t *d_pos,
		      uint32_t *d_count, void *stream);
void eg_ep_layout_host(const eg_workload_t *w, const eg_ep_src_t *src,
		       uint32_t d0, uint32_t nd, int32_t *pos, uint32_t *count);

/* Copies every (s, j, t) with pos >= 0 into row pos of views[s*nd + j]:
 * payload and scales bit for bit, src_token = t, src_rank = first_src + s
 * (when the view has it), top-k ids made local to d0+j (-1 elsewhere)
 * with their weights (0 elsewhere). views is a host array of nsrc*nd
 * views holding device (host twin: host) pointers. */
int eg_ep_pack_cuda(const eg_workload_t *w, const eg_ep_src_t *src, uint32_t d0,
		    uint32_t nd, const int32_t *d_pos,
		    const eg_ep_rows_t *views, void *stream);
void eg_ep_pack_host(const eg_workload_t *w, const eg_ep_src_t *src,
		     uint32_t d0, uint32_t nd, const int32_t *pos,
		     const eg_ep_rows_t *views);
/* The same pack restricted to slice k of K of each view's rows: row p of
 * view q is written when counts[q]*k/K <= p < counts[q]*(k+1)/K (the
 * split the engines send by), so slice kernels on K streams can feed K
 * communicators as each finishes; the K slices together are
 * eg_ep_pack_cuda. counts: host, one per view. */
int eg_ep_pack_slice_cuda(const eg_workload_t *w, const eg_ep_src_t *src,
			  uint32_t d0, uint32_t nd, const int32_t *d_pos,
			  const eg_ep_rows_t *views, const uint32_t *counts,
			  uint32_t k, uint32_t K, void *stream);

/* Completes a receive buffer whose rows are in place: rank_prefix from
 * prefix (host, world + 1 entries), src_rank of every row from it, and
 * expert_count from the rows' local ids. Sets r->num_rows. */
int eg_ep_finish_cuda(eg_recv_t *r, const uint32_t *prefix, void *stream);
void eg_ep_finish_host(eg_recv_t *r, const uint32_t *prefix);

/* The expert stage on device rows; host twin: eg_expert_stage. Ids
 * outside [0, local_experts) count as not local here (the host twin
 * refuses them; dispatch verification reports them first). */
int eg_ep_expert_cuda(const eg_gen_t *g, const eg_recv_t *r, void *d_y,
		      void *stream);

/* Combine of one source rank with T tokens: out[t] = sum over d = 0..W-1
 * ascending with pos[d*stride + t] >= 0 of y[d] row pos, in fp32 from 0,
 * cast to the combine dtype. y is a host array of W pointers. The device
 * kernel moves 16 bytes per access when the rows allow it (same
 * arithmetic per element). */
int eg_ep_combine_cuda(const eg_workload_t *w, uint32_t T, uint32_t W,
		       const int32_t *d_pos, uint32_t stride,
		       const void *const *y, void *d_out, void *stream);
void eg_ep_combine_host(const eg_workload_t *w, uint32_t T, uint32_t W,
			const int32_t *pos, uint32_t stride,
			const void *const *y, void *out);

/* Dense combine: row i of r (expert output y) goes to row
 * src_rank[i] * stride + src_token[i] of partial (world * stride rows of
 * combine elements), every other row is zero. */
int eg_ep_scatter_cuda(const eg_workload_t *w, const eg_recv_t *r,
		       const void *d_y, uint32_t stride, void *d_partial,
		       void *stream);
void eg_ep_scatter_host(const eg_workload_t *w, const eg_recv_t *r,
			const void *y, uint32_t stride, void *partial);

/* Receive buffers in device memory: eg_recv_t with device arrays (the
 * scalar fields stay on the host), poisoned with 0xA5 like
 * eg_recv_alloc. */
/* The device window's hold (docs/metrics.md, "Boundaries"): one thread
 * on stream spins on the GPU's global timer for us microseconds, so the
 * work queued behind it waits while the host queues it. */
int eg_cuda_hold(void *stream, double us);

int eg_recv_alloc_cuda(eg_recv_t *r, const eg_workload_t *w, uint32_t rank,
		       uint32_t capacity);
void eg_recv_free_cuda(eg_recv_t *r);
/* Copies num_rows and min(capacities) rows of every array between a host
 * and a device buffer of the same workload (to_device: src is host). */
int eg_recv_copy_cuda(eg_recv_t *dst, const eg_recv_t *src, int to_device);

/* Device verifier: the fields, counts and nonfinite checks of
 * eg_verify_dispatch / eg_verify_combine on device buffers (expected in
 * canonical order, as eg_ref_dispatch makes it). Wrong values are counted
 * with atomics and the first EG_EP_VERIFY_CAP found are recorded, then
 * sorted into the host verifier's order, so the first mismatches equal
 * the host's whenever at most that many values are wrong (row_set
 * entries excepted: their counts match, their row may differ). Same
 * return convention as the host verifiers; merges into v. */
#define EG_EP_VERIFY_CAP 256
int eg_verify_dispatch_cuda(const eg_workload_t *w, const eg_recv_t *expected,
			    const eg_recv_t *actual, eg_verdict_t *v);
int eg_verify_combine_cuda(const eg_workload_t *w, uint32_t s,
			   eg_compare_t mode, const void *d_expected,
			   const double *d_ref64, const double *d_mag64,
			   const void *d_actual, eg_verdict_t *v);

#endif
