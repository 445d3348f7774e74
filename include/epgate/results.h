/* Results files, schema "epgate/results/v1" (docs/results-v1.md): one
 * JSON document with the run's context and one record per measured point
 * (suite, arm, axis values, metrics, transport evidence).  The writer is
 * incremental and atomic: after every appended point the whole document
 * is rewritten to PATH.tmp and renamed over PATH, so a crash leaves a
 * valid file holding every point finished so far.  The reader rejects
 * anything that is not a valid v1 document with one line naming the file
 * and either line:column (syntax) or the JSON path (content). */
#ifndef EPGATE_RESULTS_H
#define EPGATE_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "epgate/stats.h"

#define EG_RESULTS_SCHEMA "epgate/results/v1"
/* Largest results file the reader takes. */
#define EG_RESULTS_MAX_BYTES ((size_t)1 << 30)
/* Room for "FILE: points[12].metrics.step_us.ci_lo: message". */
#define EG_RESULTS_ERR_MAX 1024

/* One metric at one point: raw samples (measured) or a summary only
 * (recorded).  With samples, s is computed from them. */
typedef struct eg_metric {
	char *name;
	double *samples; /* NULL when the file carries a summary only */
	size_t n_samples;
	eg_summary_t s;
	/* appended (docs/results-v1.md, "Launches"): samples per launch,
	 * in order (NULL: one launch), and the spread inside and between
	 * launches (computed from them; NAN when not defined) */
	uint32_t *launch_n;
	size_t n_launches;
	double cv_within, cv_between;
} eg_metric_t;

typedef struct eg_point {
	char *id;	  /* unique in the file */
	char *suite;	  /* e.g. "ep16-vllm" */
	char *arm;	  /* e.g. "a2a", "dense" */
	json_t *axes;	  /* object: axis -> integer, real or string */
	json_t *evidence; /* object: "transport", "provider", ...; or NULL */
	eg_metric_t *metrics;
	size_t n_metrics;
	/* appended: the pass (launch number in the campaign) of each launch
	 * of its metrics, NULL for one launch, and how many of the last
	 * launches were re-measurements */
	uint32_t *passes;
	size_t n_passes;
	unsigned remeasured;
} eg_point_t;

typedef struct eg_results {
	char *path;
	int recorded;	 /* transcribed from a report, not measured */
	json_t *context; /* object, see the schema */
	eg_point_t *points;
	size_t n_points;
	/* appended: one campaign of a history (set by eg_history_read) */
	int history;
	/* appended: context.revision, 1 where absent (an older epgate's
	 * file: eg_results_older), and what the reader derived for such a
	 * file: evidence key -> the key it came from ("transport_class":
	 * "transport"), or NULL */
	unsigned revision;
	json_t *derived;
} eg_results_t;

/* The revision of results v1's content this epgate writes into the
 * context of what it measures (docs/results-v1.md, "Older files"): 2
 * added the evidence of the libraries as loaded, the host and the GPU.
 * A file without one is revision 1. */
#define EG_RESULTS_REVISION 2
/* r was measured by an older epgate: a revision below this one's, its
 * context's build an epgate's, not a recorded campaign. A gate that
 * finds a field missing there says "recorded by an older epgate: FIELD
 * missing; re-record". */
int eg_results_older(const eg_results_t *r);
/* r is such a file and key an evidence key its epgate did not write yet
 * (the libraries as loaded, host, gpu, lib_*, raw_transport): its
 * absence says nothing of what ran. */
int eg_results_older_lacks(const eg_results_t *r, const char *key);

/* Reads and validates path.  On error returns <0 (EG_ENOENT, EG_EIO,
 * EG_EPARSE, EG_ERANGE over EG_RESULTS_MAX_BYTES, EG_ENOMEM) with one
 * line in err: "path:line:col: message" for malformed JSON, "path:
 * json.path: message" otherwise. */
int eg_results_read(eg_results_t *r, const char *path, char *err,
		    size_t errlen);
/* Same, from a JSON text (name stands for the path in messages). */
int eg_results_parse(eg_results_t *r, const char *text, const char *name,
		     char *err, size_t errlen);
void eg_results_free(eg_results_t *r);
/* Reads n files into a new array (*out, free with eg_results_free_all
 * also after an error; *nout of them read); stops at the first error. */
int eg_results_read_all(char *const *paths, size_t n, eg_results_t **out,
			size_t *nout, char *err, size_t errlen);
void eg_results_free_all(eg_results_t *r, size_t n);
/* The metric called name at p, or NULL. */
const eg_metric_t *eg_point_metric(const eg_point_t *p, const char *name);
/* Moves *p to the end of r->points (*p is zeroed; the caller keeps
 * ids unique). */
int eg_results_push(eg_results_t *r, eg_point_t *p);

/* ---- launches (lib/results/launch.c) ---------------------------------
 * A campaign measures each point in several launches; the orchestrator
 * adds each launch's point (one launch, as the driver made it) to the
 * point it holds: samples appended with their launch count (a metric a
 * launch lacks counts 0 there), summaries (counts) kept when equal and
 * otherwise their median taken, evidence values that differ between
 * launches joined with " | " (so an evidence gate sees a launch that ran
 * another path).  *add is consumed (zeroed) on success; acc may be empty
 * (zeroed), then it becomes the first launch.  remeasure: the launch is a
 * re-measurement (counted in acc->remeasured). */
int eg_point_add_launch(eg_point_t *acc, eg_point_t *add, uint32_t pass,
			int remeasure);
/* The samples of a metric as the statistics take them. */
eg_samples_t eg_metric_samples(const eg_metric_t *m);
/* The one summary of a measured metric of point id (median, quantiles,
 * hierarchical interval over its launches, with the file's bootstrap
 * seed): what the writer writes, what the reader checks, and what every
 * in-process reader (the sweep's table, its gates, its re-measurement
 * choice) sees once eg_point_add_launch has added a launch.  A summary
 * metric (no samples) keeps its own.  EG_EINVAL for bad samples. */
int eg_metric_summary(const char *id, const eg_metric_t *m, eg_summary_t *s);
/* Launches of a point (1 without pass records). */
size_t eg_point_launches(const eg_point_t *p);

/* ---- history (lib/results/history.c, docs/results-v1.md "History") ---
 * Campaigns kept as DIR/<profile>/<machine>/<UTC stamp>.json. */
#define EG_HISTORY_LAST 10
/* This machine's id: EPGATE_MACHINE when set (CI runners whose host name
 * changes), else "<host>--<cpu model>[--<gpu model>x<count>]", lowercase
 * words of [a-z0-9.] joined by '-'. */
int eg_machine_id(char *out, size_t len);
/* Copies the results file (whose context, in r, names the profile, the
 * machine and when it was created) into the history, atomically;
 * stored: the new file's path. */
int eg_history_store(const char *dir, const eg_results_t *r,
		     const char *results_path, char *stored, size_t slen,
		     char *err, size_t errlen);
/* The last `last` campaigns (0: all) of profile and machine, oldest
 * first; a missing folder is no campaign.  Free with eg_history_free. */
int eg_history_list(const char *dir, const char *profile, const char *machine,
		    size_t last, char ***paths, size_t *n, char *err,
		    size_t errlen);
void eg_history_free(char **paths, size_t n);
/* The last `last` campaigns of the profile and machine cur's context
 * names, read (free with eg_results_free_all, also after an error). */
int eg_history_read(const char *dir, const eg_results_t *cur, size_t last,
		    eg_results_t **out, size_t *n, char *err, size_t errlen);

/* ---- one point, one codec --------------------------------------------
 * The JSON object of one point, as it stands in a file's "points" and,
 * on one line, in the spool files of sweep jobs.  Messages name the
 * source and the point: "name: jpath.metrics.step_us.n: message". */

/* The point's object: metrics given as samples get their summary
 * computed from them (their s is ignored), the others are written as
 * their summary s (median and n required). */
int eg_point_to_json(const eg_point_t *p, json_t **out, const char *name,
		     const char *jpath, char *err, size_t errlen);
/* Validates one point object (the reader's rules) and converts it; p is
 * zeroed first and left empty on error. */
int eg_point_from_json(json_t *o, eg_point_t *p, const char *name,
		       const char *jpath, char *err, size_t errlen);
/* The same object as one compact line (no newline; free() it), and
 * back; jpath is "point". */
int eg_point_line(const eg_point_t *p, char **line, const char *name, char *err,
		  size_t errlen);
int eg_point_parse_line(const char *line, eg_point_t *p, const char *name,
			char *err, size_t errlen);
/* Frees what a point holds (from the reader, the codec or the bench
 * driver) and zeroes it. */
void eg_point_fini(eg_point_t *p);

/* Incremental writer.  create writes a valid document with the context
 * and no points (context: an object or NULL; it is copied, and "created"
 * is set to the current UTC time when absent).  append turns the point
 * into its object (eg_point_to_json), validates it like the reader, and
 * rewrites the file atomically (lib/base/file.c). */
typedef struct eg_results_writer eg_results_writer_t;
int eg_results_create(eg_results_writer_t **w, const char *path, int recorded,
		      json_t *context, char *err, size_t errlen);
int eg_results_append(eg_results_writer_t *w, const eg_point_t *p, char *err,
		      size_t errlen);
/* Replaces the point with p's id (or appends it): the same validation
 * and atomic rewrite as append.  The orchestrator puts a point again
 * after each of its launches. */
int eg_results_put(eg_results_writer_t *w, const eg_point_t *p, char *err,
		   size_t errlen);
/* Points appended so far. */
size_t eg_results_count(const eg_results_writer_t *w);
/* Real numbers written from the next rewrite on with at most `digits`
 * significant digits (1..17; 0: 17, jansson's default, which reads back
 * exactly).  For trimmed copies such as calibration fixtures. */
void eg_results_set_digits(eg_results_writer_t *w, int digits);
void eg_results_close(eg_results_writer_t *w);

/* Metrics and axes the schema knows (docs/results-v1.md).  A gate may
 * name any metric present in a results file; a name that is neither
 * known nor present is an error, a known one without data a skip. */
typedef enum eg_better {
	EG_BETTER_NONE = 0, /* a count: neither direction is better */
	EG_BETTER_LOWER = 1,
	EG_BETTER_HIGHER = 2,
} eg_better_t;

typedef struct eg_metric_info {
	const char *name;
	const char *unit;
	eg_better_t better;
	const char *what;
} eg_metric_info_t;

/* NULL when name is not a known metric. */
const eg_metric_info_t *eg_metric_info(const char *name);
/* Table of known metrics, NULL-name terminated. */
extern const eg_metric_info_t eg_known_metrics[];
/* Known axis names and arm names, NULL-terminated. */
extern const char *const eg_known_axes[];
extern const char *const eg_known_arms[];
int eg_axis_known(const char *name);
int eg_arm_known(const char *name);
/* A metric, axis or evidence field name: [a-z][a-z0-9_]*. */
int eg_results_name_ok(const char *s);

#endif
