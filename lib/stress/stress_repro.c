/* `epgate stress`: the first failure's replay commands run before they
 * are printed (lib/stress/stress.h). Each runs as printed, by /bin/sh, in
 * a fresh process of this very executable (its folder first on PATH), and
 * its failures are read back from its JSON: a line is printed as a
 * reproducer only when it failed the same call the same way. A fault that
 * lives in state the calls build up (a counter, a cache) passes the
 * one-call line and fails the sequence; a fault of the inputs fails
 * both, so the sequence, which costs every call up to the failure, runs
 * only when the one-call line did not reproduce. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/stress/stress_int.h"

/* set for a check's own run: it does not check its reproducers again */
#define EG__CHECKING "EPGATE_STRESS_CHECKING"

typedef struct eg__chk {
	char dir[256];
	char tap[320], junit[320], json[320], out[320];
	int broke; /* a line could not run: its output stays */
} eg__chk_t;

/* As stress.json says a failure's kind. */
const char *eg_stress_fail_kind(const eg_stress_fail_t *f)
{
	return f->error ? "error" : "mismatch";
}

/* The line with the check's reports appended, run by /bin/sh with its
 * output into k->out: its exit status, or <0. */
static int eg__sh(const eg__chk_t *k, const char *line)
{
	const char *self = eg_self_exe(), *slash;
	char dir[4096], qdir[4200] = "", *cmd = NULL;
	size_t len = strlen(line) + 3 * sizeof(k->tap) + sizeof(qdir) + 256;
	int status, rc = EG_ESYS;
	pid_t pid;

	if (!self || !(slash = strrchr(self, '/')))
		return EG_ENOENT;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - self), self);
	eg_shell_append(qdir, sizeof(qdir), dir);
	if (!(cmd = malloc(len)))
		return EG_ENOMEM;
	snprintf(cmd, len,
		 "PATH=%s:\"$PATH\"; export PATH; " EG__CHECKING
		 "=1; export " EG__CHECKING "; %s",
		 qdir, line);
	eg_shell_append(cmd, len, "--tap");
	eg_shell_append(cmd, len, k->tap);
	eg_shell_append(cmd, len, "--junit");
	eg_shell_append(cmd, len, k->junit);
	eg_shell_append(cmd, len, "--json");
	eg_shell_append(cmd, len, k->json);
	unlink(k->json); /* what is read back is this run's */
	fflush(NULL);
	if ((pid = fork()) == 0) {
		int fd = open(k->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int in = open("/dev/null", O_RDONLY);

		if (fd < 0 || in < 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		goto out;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			goto out;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : EG_EXIT_HARD;
out:
	free(cmd);
	return rc;
}

static const char *eg__js(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The run's failure at call `call` (same_instance: of f's instance too):
 * 1 it failed there as f did, 0 it did not, -1 the run left no case (it
 * did not run); saw says what the run saw. */
static int eg__match(const eg__chk_t *k, const eg_stress_fail_t *f,
		     uint64_t call, int same_instance, uint64_t *calls,
		     char *saw, size_t len)
{
	json_t *doc = json_load_file(k->json, 0, NULL), *fs, *x = NULL;
	json_t *c = json_array_get(json_object_get(doc, "cases"), 0);
	size_t i;
	int hit = 0;

	if (!json_object_get(c, "calls")) {
		json_decref(doc);
		return -1;
	}
	*calls += (uint64_t)json_integer_value(json_object_get(c, "calls"));
	fs = json_object_get(c, "failures_listed");
	json_array_foreach(fs, i, x)
	{
		json_int_t n = json_integer_value(json_object_get(x, "call"));
		json_int_t in =
		    json_integer_value(json_object_get(x, "instance"));

		if ((uint64_t)n == call &&
		    !strcmp(eg__js(x, "stage"), f->stage) &&
		    !strcmp(eg__js(x, "kind"), eg_stress_fail_kind(f)) &&
		    (!same_instance || in == f->instance)) {
			hit = 1;
			break;
		}
	}
	x = hit ? x : json_array_get(fs, 0);
	if (!x)
		snprintf(saw, len, "passed");
	else
		snprintf(
		    saw, len, "%s at call %lld: %s: %.80s",
		    hit ? "failed again" : "failed otherwise",
		    (long long)json_integer_value(json_object_get(x, "call")),
		    eg__js(x, "stage"), eg__js(x, "what"));
	json_decref(doc);
	return hit;
}

/* One line run and judged; a line that could not run is NONE, its
 * output kept to be read. */
static eg_stress_rerun_t eg__check(eg__chk_t *k, const char *line,
				   const eg_stress_fail_t *f, uint64_t call,
				   int same_instance, eg_stress_case_t *c,
				   char *saw, size_t len)
{
	int rc = eg__sh(k, line), hit = -1;

	if (rc >= 0)
		hit = eg__match(k, f, call, same_instance, &c->repro_calls, saw,
				len);
	if (hit >= 0)
		return hit ? EG_STRESS_RERUN_AGAIN : EG_STRESS_RERUN_NOT;
	k->broke = 1;
	if (rc < 0)
		snprintf(saw, len, "could not run: %s", eg_strerror(rc));
	else
		snprintf(saw, len,
			 "could not run: exit %d (its output: %.120s)", rc,
			 k->out);
	return EG_STRESS_RERUN_NONE;
}

static void eg__chk_paths(eg__chk_t *k)
{
	snprintf(k->tap, sizeof(k->tap), "%s/check.tap", k->dir);
	snprintf(k->junit, sizeof(k->junit), "%s/check.junit.xml", k->dir);
	snprintf(k->json, sizeof(k->json), "%s/check.json", k->dir);
	snprintf(k->out, sizeof(k->out), "%s/check.out", k->dir);
}

/* The folder and what the runs left in it, but the output of a run that
 * could not run. */
static void eg__chk_clean(const eg__chk_t *k)
{
	unlink(k->tap);
	unlink(k->junit);
	unlink(k->json);
	if (!k->broke) {
		unlink(k->out);
		rmdir(k->dir);
	}
}

void eg_stress_repro_check(const eg_stress_opts_t *o, eg_stress_case_t *c)
{
	const char *tmp = getenv("TMPDIR");
	const eg_stress_fail_t *f = c->n_fails ? &c->fails[0] : NULL;
	char in[6000], seq[6000];
	eg__chk_t k = {.broke = 0};

	c->repro_in = c->repro_seq = EG_STRESS_RERUN_NONE;
	c->repro_in_saw[0] = c->repro_seq_saw[0] = '\0';
	if (c->skipped || !f)
		return;
	if (eg_stress_is_check()) {
		snprintf(c->repro_in_saw, sizeof(c->repro_in_saw),
			 "not checked: this run is a check's own");
		return;
	}
	snprintf(k.dir, sizeof(k.dir), "%s/epgate-stress-check-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(k.dir)) {
		snprintf(c->repro_in_saw, sizeof(c->repro_in_saw),
			 "not checked: cannot make a folder in %s: %s",
			 tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return;
	}
	eg__chk_paths(&k);
	eg_stress_repro(o, c, f, in, sizeof(in), seq, sizeof(seq));
	c->repro_in = eg__check(&k, in, f, 0, 0, c, c->repro_in_saw,
				sizeof(c->repro_in_saw));
	if (c->repro_in != EG_STRESS_RERUN_AGAIN)
		c->repro_seq =
		    eg__check(&k, seq, f, f->call, 1, c, c->repro_seq_saw,
			      sizeof(c->repro_seq_saw));
	else
		snprintf(c->repro_seq_saw, sizeof(c->repro_seq_saw),
			 "not run: one call reproduces it");
	eg__chk_clean(&k);
}

int eg_stress_is_check(void)
{
	return getenv(EG__CHECKING) != NULL;
}

int eg_stress_run_json(const char *line, json_t **doc, char *saw, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	eg__chk_t k = {.broke = 0};
	int rc;

	*doc = NULL;
	snprintf(k.dir, sizeof(k.dir), "%s/epgate-stress-check-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(k.dir)) {
		snprintf(saw, len, "cannot make a folder in %s: %s",
			 tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return EG_ESYS;
	}
	eg__chk_paths(&k);
	rc = eg__sh(&k, line);
	if (rc >= 0)
		*doc = json_load_file(k.json, 0, NULL);
	if (!*doc) {
		k.broke = 1;
		if (rc < 0)
			snprintf(saw, len, "could not run: %s",
				 eg_strerror(rc));
		else
			snprintf(saw, len,
				 "could not run: exit %d (its output: %.120s)",
				 rc, k.out);
	}
	eg__chk_clean(&k);
	return rc;
}
