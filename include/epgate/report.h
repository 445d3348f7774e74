/* Reports written as results arrive: TAP 14 (line by line, flushed) and
 * JUnit XML (libxml2; the whole file atomically rewritten after every
 * test case, so a crash leaves a valid file with all finished cases).
 * Diagnostics are jansson objects: TAP renders them as YAML (libyaml),
 * JUnit as readable text in <failure>. */
#ifndef EPGATE_REPORT_H
#define EPGATE_REPORT_H

#include <stdint.h>

#include <jansson.h>

typedef enum eg_status {
	EG_STATUS_PASS = 0,
	EG_STATUS_FAIL = 1,
	EG_STATUS_SKIP = 2,
	EG_STATUS_ERROR = 3, /* could not run (hard error) */
	EG_STATUS_TODO = 4,  /* expected failure: TAP # TODO */
	/* the code under test ended its process (a signal, abort, exit()):
	 * a failure of its own kind; TAP "not ok" with "status: crash" in
	 * its YAML, JUnit <error type="crash"> */
	EG_STATUS_CRASH = 5,
} eg_status_t;

typedef struct eg_tap eg_tap_t;

/* The TAP version written: 14 (default) or 13, for harnesses that know
 * no later one (Debian 12's prove); the files differ only in the
 * version line.  eg_tap_set_version (--tap-version) wins over the
 * environment's EPGATE_TAP_VERSION.  parse: "13" or "14" -> 13 or 14,
 * else EG_EINVAL. */
int eg_tap_version_parse(const char *s);
int eg_tap_set_version(int version);
int eg_tap_version(void);

/* Opens path for writing ("-" = stdout) and writes "TAP version V" and,
 * when planned >= 0, the plan "1..planned". With planned < 0 the plan is
 * written by eg_tap_close. */
int eg_tap_open(eg_tap_t **t, const char *path, int planned);
/* One test point: "ok N - desc" / "not ok N - desc", with " # SKIP why"
 * or " # TODO why" where status says so; diag (nullable, an object) is
 * written as a YAML block indented by 2 spaces between "  ---" and
 * "  ...". Description is sanitized ('#' escaped, newlines removed).
 * Returns the test number. */
int eg_tap_point(eg_tap_t *t, eg_status_t st, const char *desc,
		 const char *reason, json_t *diag);
/* "# text" comment line. */
int eg_tap_comment(eg_tap_t *t, const char *text);
/* "Bail out! reason". */
int eg_tap_bail(eg_tap_t *t, const char *reason);
int eg_tap_close(eg_tap_t *t);

typedef struct eg_junit eg_junit_t;

/* One <testsuites> with one <testsuite name=suite> per file. */
int eg_junit_open(eg_junit_t **j, const char *path, const char *suite);
/* Adds a <testcase classname= name= time=>, with <failure message=>,
 * <error message=> or <skipped message=> as status says; details (may be
 * NULL) becomes the element text. Control characters are removed, so any
 * input yields valid XML. Rewrites the file atomically (tmp + rename).
 * Names must be unique per classname (GitLab keeps the first). */
int eg_junit_case(eg_junit_t *j, const char *classname, const char *name,
		  double time_s, eg_status_t st, const char *message,
		  const char *details);
int eg_junit_close(eg_junit_t *j);
/* A <property name= value=> of the testsuite (in its <properties>, its
 * first child); rewrites the file. The evidence of what ran
 * (include/epgate/evidence.h) as properties: each string member by its
 * key, each knob of its "env" as "env.NAME". */
int eg_junit_property(eg_junit_t *j, const char *name, const char *value);
int eg_junit_evidence(eg_junit_t *j, const json_t *ev);

/* YAML rendering of a JSON object (used by TAP; exposed for tests).
 * Returns a malloc'd string, each line prefixed by indent spaces. */
char *eg_json_to_yaml(json_t *obj, int indent);

/* Run folder "<root>/<UTC yyyymmddThhmmssZ>-<pid>", created with
 * parents. */
int eg_run_dir_create(const char *root, char *out, size_t len);

#endif
