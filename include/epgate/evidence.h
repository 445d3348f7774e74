/* Evidence of what ran (docs/results-v1.md, "Evidence"): the libraries
 * this process has loaded, each as it reports its own version at run
 * time (not the headers epgate was compiled with), the host and GPU, the
 * environment knobs that change behaviour; and the evidence of results
 * files summarized in one object for summary.json, JUnit properties and
 * the HTML page's header. */
#ifndef EPGATE_EVIDENCE_H
#define EPGATE_EVIDENCE_H

#include <stddef.h>

#include <jansson.h>

#include "epgate/report.h"
#include "epgate/results.h"

/* What a library is when it is not in the process. */
#define EG_NOT_LOADED "not loaded"

/* This process as the loaded libraries report it. Versions are
 * "MAJOR.MINOR[.PATCH]", or EG_NOT_LOADED. */
typedef struct eg_loaded {
	char host[64];
	char nccl[24];	      /* ncclGetVersion of the libnccl loaded */
	char libfabric[24];   /* fi_version() of the libfabric loaded */
	char nvshmem[24];     /* nvshmem_info_get_version */
	char cuda[24];	      /* the CUDA runtime epgate runs on */
	char cuda_driver[24]; /* cuDriverGetVersion: the driver's CUDA API */
	char driver[32];      /* the NVIDIA kernel module, or "none" */
	char gpu[96];	      /* the caller's (eg_gpu_name), else "" */
} eg_loaded_t;

/* Fills l from the libraries mapped into this process now. Cheap (no
 * library is initialized, none is loaded); the GPU is left "". */
void eg_loaded_read(eg_loaded_t *l);
/* The name of CUDA device dev ("NVIDIA H200") into out; "" without
 * CUDA or where the device cannot be asked. */
void eg_gpu_name(int dev, char *out, size_t len);
/* Sets l's non-empty fields as strings in o under the names of
 * docs/results-v1.md (host, gpu, nccl, libfabric, nvshmem, cuda,
 * cuda_driver, driver). <0 on out of memory. */
int eg_loaded_to_json(const eg_loaded_t *l, json_t *o);

/* Whether an environment variable changes what runs, so that results
 * record it: NCCL_*, FI_*, NVSHMEM_*, EPGATE_* (not the job's secret),
 * EP_*, UCX_*, CUDA_VISIBLE_DEVICES. name is "KEY" (no '='). */
int eg_env_knob(const char *name);
/* The knobs of this process's environment into env (an object). */
int eg_env_knobs(json_t *env);

/* The evidence of n results files in one object: for every key named in
 * docs/results-v1.md ("Evidence") the distinct values of the points'
 * evidence and of the contexts, in the order first seen, joined with
 * " | ", and "env" (the contexts' knobs, an object of strings). A key
 * no file has is absent. NULL on out of memory. */
json_t *eg_results_evidence(const eg_results_t *r, size_t n);
/* Adds from's values to into's (both such objects, "env" too): a
 * value already there is not repeated. <0 on out of memory. */
int eg_evidence_merge(json_t *into, const json_t *from);
/* This process's evidence in the same shape: the libraries as loaded,
 * the host, the knobs, and, when engine runs a plugin loaded here, the
 * library under test (lib/suite/evidence.c). NULL on out of memory. */
json_t *eg_process_evidence(const char *engine);
/* The run folder's summary.json (path) with ev as its "evidence" (docs/
 * results-v1.md): read, set, replaced atomically; nothing for NULL. <0
 * after a message on stderr. */
int eg_summary_evidence(const char *path, const json_t *ev);
/* eg_process_evidence(engine) as j's properties (eg_junit_evidence). */
void eg_suite_junit_evidence(eg_junit_t *j, const char *engine);

/* The evidence keys of eg_results_evidence, in the order reports show
 * them; NULL-terminated. */
extern const char *const eg_evidence_keys[];
/* name is one of them: a gate may name it where no file has it (the
 * older files of docs/results-v1.md). */
int eg_evidence_key(const char *name);
/* The same, or a key a point's evidence has of its own (its timing
 * boundary and how it was held, docs/metrics.md "Boundaries"): what a
 * gate's evidence rule may name before any file has it. */
int eg_evidence_point_key(const char *name);

#endif
