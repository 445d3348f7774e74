/* Calibration of the gates on measured campaigns (docs/gates.md,
 * "Calibration"): `epgate bench calibrate DIR` and the replay test of
 * make check.  Every campaign of DIR is judged as CI would judge it,
 * through the gate engine: unchanged code against its history (false
 * alarms), the planted slowdowns against the same history (detection),
 * the clean campaigns with their arm's times scaled by 5% and 10% (the
 * detection rate of a known effect on real noise) and the smallest such
 * scaling caught 95% of the time (the minimum detectable effect); the A/A
 * and A/B jobs by their own arms. */
#ifndef EG_CAMPAIGN_CALIB_H
#define EG_CAMPAIGN_CALIB_H

#include <stddef.h>

#include "epgate/results.h"

typedef enum eg_calib_kind {
	EG_CALIB_CLEAN = 0, /* bench profile, unchanged code */
	EG_CALIB_PLANT,	    /* bench profile --plant slow:... */
	EG_CALIB_AA,	    /* bench ab, B = slow:0%:A */
	EG_CALIB_AB,	    /* bench ab, B = a planted slowdown of A */
} eg_calib_kind_t;

typedef struct eg_calib_camp {
	eg_results_t r;
	eg_calib_kind_t kind;
	char arm[64];	   /* the arm the slowdown is planted in */
	double amount;	   /* the planted fraction (0 clean or A/A) */
	const char *b, *a; /* A/B arms */
	int derived;	   /* one arm of an A/B job, as a campaign */
} eg_calib_camp_t;

typedef struct eg_calib_opts {
	const char *dir;     /* campaigns, *.json, in time order by name */
	const char *gates;   /* the shipped gate file to check, or NULL */
	const char *save;    /* write trimmed copies here, or NULL */
	unsigned judged;     /* launches judged first (0: 2/3 of them) */
	unsigned history;    /* campaigns in a history baseline (10) */
	int quick;	     /* no minimum-detectable-effect scan */
	const char *metrics; /* "dispatch_us,step_us,combine_us" */
} eg_calib_opts_t;

/* Loads, classifies and sorts the campaigns of dir; with derive, each
 * A/B job's arms also as campaigns of one arm (for the history). */
int eg_calib_load(const char *dir, int derive, eg_calib_camp_t **out, size_t *n,
		  char *err, size_t errlen);
void eg_calib_free(eg_calib_camp_t *c, size_t n);

/* A campaign restricted to the launches of pass < max_pass (and, for the
 * points in extra (a JSON array of ids, or NULL), of pass < max_extra),
 * the metrics named in keep (comma list; NULL: all), the times of arm
 * scaled by 1 + shift (arm NULL: none); summaries recomputed (resamples
 * for the interval). */
int eg_calib_view(const eg_results_t *src, unsigned max_pass,
		  const json_t *extra, unsigned max_extra, const char *keep,
		  const char *arm, double shift, unsigned resamples,
		  eg_results_t *out);

/* Trimmed copies of the campaigns into o->save (same names): the
 * metrics of o->metrics only, samples to 4 significant digits. */
int eg_calib_save(const eg_calib_camp_t *c, size_t n, const eg_calib_opts_t *o);

/* The length of the first item of the comma list *list (up to its comma
 * or its end); *list moves to the next item, NULL after the last. */
size_t eg_calib_item(const char **list);

/* Multiplies the times (the *_us metrics) of arm's points in r by k. */
void eg_calib_scale(eg_results_t *r, const char *arm, double k);

/* The whole calibration: the table on stdout; returns 0 when the targets
 * hold (at most 1 false alarm in 20 campaigns, at least 19 of 20
 * planted slowdowns caught by the shipped gates and by the A/B gates),
 * 1 when they do not, 99 on bad input. */
int eg_calibrate(const eg_calib_opts_t *o);

#endif
