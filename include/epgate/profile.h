/* Performance profiles (docs/profiles.md): one YAML file under profiles/
 * declares a sweep campaign: the engine arms, the transport, the
 * repetitions, a base workload and the sweeps (axes and their values),
 * and the gate file that judges the results.  The parser is strict like
 * the gate parser: unknown or repeated keys, unknown axes, malformed
 * numbers and points that are not valid workloads are errors naming
 * file:line. */
#ifndef EPGATE_PROFILE_H
#define EPGATE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "epgate/workload.h"

#define EG_PROFILE_ERR_MAX 1024

/* The axes a sweep may vary (docs/profiles.md), in the order a point id
 * lists them. */
typedef enum eg_axis {
	EG_AXIS_CONCURRENCY = 0, /* tokens per rank */
	EG_AXIS_WORLD,		 /* ranks */
	EG_AXIS_NODES,		 /* (virtual) nodes; world % nodes == 0 */
	EG_AXIS_EXPERTS,
	EG_AXIS_NUM_COMMS, /* endpoints / communicators, 1..16 */
	EG_AXIS_HIDDEN,
	EG_AXIS_TOPK,
	EG_AXIS_DTYPE,	 /* string: bf16, fp32, fp8 */
	EG_AXIS_ROUTING, /* string: uniform, zipf:S, ... */
	EG_AXIS_COUNT,
} eg_axis_t;

/* Axis names, indexed by eg_axis_t; NULL-terminated. */
extern const char *const eg_profile_axes[];
/* 1 for dtype and routing (string values). */
int eg_profile_axis_is_string(eg_axis_t a);

/* One value of one axis: numbers for numeric axes, text for strings. */
typedef struct eg_axis_value {
	uint32_t num;
	char str[48];
} eg_axis_value_t;

typedef struct eg_sweep_axis {
	eg_axis_t axis;
	eg_axis_value_t *values;
	size_t n_values;
	int line;
} eg_sweep_axis_t;

typedef struct eg_sweep {
	char *name; /* the suite of its points */
	char **arms;
	size_t n_arms;
	eg_sweep_axis_t *axes;
	size_t n_axes;
	int zip;		/* values taken together, not the product */
	unsigned warmup, iters; /* from the profile unless overridden */
	int line;
	unsigned launches; /* independent launches per point */
} eg_sweep_t;

typedef enum eg_launcher {
	EG_LAUNCHER_LOCAL = 0, /* epgate launch, virtual nodes */
	EG_LAUNCHER_SLURM = 1, /* srun inside an allocation */
} eg_launcher_t;

typedef struct eg_profile {
	char *path;
	char *name;
	char *description;
	char *transport; /* "fabric", "nccl", "null" */
	char *provider;	 /* NULL: auto */
	eg_launcher_t launcher;
	char *gates; /* gate file as written, or NULL */
	double timeout_s;
	unsigned warmup, iters;
	/* launches per point (repetitions.launches); re-measurement of the
	 * points a gate finds inconclusive or failing: rounds of extra
	 * launches each (remeasure: {rounds, launches}) */
	unsigned launches, remeasure_rounds, remeasure_launches;
	/* interleave: steps -- the arms of a point (one sweep, the same axes)
	 * are measured together in each launch, step by step (as bench ab's
	 * two arms), so that a ratio of two arms sees the machine's mood of
	 * the same moment; none (the default): one arm after the other */
	int interleave;
	/* model: the transport's raw numbers, 0 = measure (fabric) */
	double model_bw_gbps, model_post_rate;
	/* raw phase (fabric): messages per peer, message size, bandwidth
	 * bytes per peer, timed and untimed calls */
	unsigned raw_msgs, raw_iters, raw_warmup;
	size_t raw_msg_size, raw_size;
	char **env_keys, **env_vals;
	size_t n_env;
	/* named arms (arms: {NAME: SPEC}): a sweep's arm NAME runs the
	 * engine SPEC (a2a, dense or plugin:..., "{num_comms}" in it the
	 * point's num_comms), its points written as NAME */
	char **arm_names, **arm_specs;
	size_t n_arm_names;
	/* python: the bridge's interpreter (a venv folder or its python),
	 * EPGATE_PYTHON in every rank unless set; NULL: none */
	char *python;
	/* base workload: every point starts from it */
	eg_axis_value_t base[EG_AXIS_COUNT];
	char *base_data; /* data mode, or NULL */
	char *base_mask; /* mask ratio text, or NULL */
	char *base_seed; /* seed text, or NULL */
	eg_sweep_t *sweeps;
	size_t n_sweeps;
} eg_profile_t;

/* One resolved point: a sweep, an arm and every axis's value. */
typedef struct eg_bench_point {
	char id[192];
	const char *suite; /* the sweep's name (owned by the profile) */
	const char *arm;
	size_t sweep;
	eg_axis_value_t v[EG_AXIS_COUNT];
	unsigned warmup, iters;
	unsigned launches;
} eg_bench_point_t;

/* Finds a profile by name (profiles/NAME.profile in the data folders,
 * lib/base/data_path.c) or takes a path as is (lib/bench/profile_find.c). */
int eg_bench_find_profile(const char *name, char *path, size_t len);
/* Parses a profile.  Errors: "path:line: message", <0. */
int eg_profile_load(eg_profile_t *p, const char *path, char *err,
		    size_t errlen);
int eg_profile_parse(eg_profile_t *p, const char *text, size_t len,
		     const char *name, char *err, size_t errlen);
void eg_profile_free(eg_profile_t *p);

/* Every point of the profile, sweep by sweep, arm by arm, in the order of
 * the axes' values.  Free *pts with free(). */
int eg_profile_points(const eg_profile_t *p, eg_bench_point_t **pts, size_t *n,
		      char *err, size_t errlen);

/* pt's arm becomes arm (not copied: it must outlive pt) and its id
 * "sweep/arm/axes" follows. */
void eg_bench_point_set_arm(const eg_profile_t *p, eg_bench_point_t *pt,
			    const char *arm);

/* Are a and b the same point but for the arm (one sweep, every axis
 * alike)?  Such points run the same workload. */
int eg_bench_point_same_shape(const eg_bench_point_t *a,
			      const eg_bench_point_t *b);

/* The engine spec of a named arm (arms: of the profile), or NULL. */
const char *eg_profile_arm_spec(const eg_profile_t *p, const char *arm);

/* What runs the point: its arm, or for a named arm (also inside a
 * planted slow:X:NAME) the arm's spec with "{num_comms}" the point's
 * value, into buf.  EG_ERANGE when buf is too small. */
int eg_profile_arm_engine(const eg_profile_t *p, const eg_bench_point_t *pt,
			  char *buf, size_t len);

/* The interpreter the profile's python: names: a venv folder's
 * bin/python3 (else bin/python), or the path as given; NULL when the
 * profile names none. */
const char *eg_profile_python(const eg_profile_t *p, char *buf, size_t len);

/* The workload of a point (world = its world), validated. */
int eg_bench_point_workload(const eg_profile_t *p, const eg_bench_point_t *pt,
			    eg_workload_t *w, char *err, size_t errlen);

#endif
