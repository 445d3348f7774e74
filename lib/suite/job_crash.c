/* Why a job ended early, from its log (lib/suite/job_crash.h). The lines
 * read are the launcher's ("[launch] rank 2 killed by signal 11"), the
 * ranks' last words ("[2] epgate: rank 2: ended by signal 6 (SIGABRT) in
 * POSITION", lib/step/where.c) and a waiting peer's deadline ("... rank
 * 0 still waits on ranks 2"); every other line of a rank is kept, its
 * last few, as what that rank said before it ended. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strsignal */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "lib/suite/job_crash.h"
#include "lib/step/where.h"

#define EG__RANKS 64 /* ranks whose last lines are kept */
#define EG__KEEP  4  /* lines kept per rank */
#define EG__LINE  400

/* src into dst (len bytes), cut to fit. */
static void eg__copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

typedef struct eg__ring {
	char line[EG__KEEP][EG__LINE];
	unsigned n;
} eg__ring_t;

typedef struct eg__scan {
	eg_job_crash_t *jc;
	eg__ring_t *ring;	      /* EG__RANKS */
	int killed, killed_sig;	      /* the launcher's first "killed by" */
	int exited, exit_status;      /* its first "exited with status" */
	int waited;		      /* the first rank waited on, -1 */
	char wait_line[EG__LINE];     /* the line that said so */
	char stopped[EG__RANKS][256]; /* where each stopped rank was */
	int ended;		      /* a rank's own "ended by" seen */
	int failed, failed_peer;      /* the first engine error's rank, and
					 whether its message blames a peer */
	char fail_where[256], fail_msg[EG__LINE], fail_err[160];
	char peer_where[256]; /* the first engine error's position, any
				 rank's: where the peers were */
	double deadline;      /* the launcher's job deadline expired (s) */
} eg__scan_t;

/* "NAME[, step S of N], iteration I[, PHASE]" into jc's fields. */
static void eg__position(eg_job_crash_t *jc, const char *pos)
{
	const char *it = strstr(pos, ", iteration "), *st, *ph;
	size_t n;

	snprintf(jc->c.where, sizeof(jc->c.where), "%s", pos);
	if (!it)
		return;
	st = strstr(pos, ", step ");
	n = (size_t)((st && st < it ? st : it) - pos);
	snprintf(jc->workload, sizeof(jc->workload), "%.*s", (int)n, pos);
	jc->step =
	    st && st < it && atoi(st + 7) > 0 ? (unsigned)atoi(st + 7) - 1 : 0;
	jc->iter = (unsigned)strtoul(it + 12, NULL, 10);
	ph = strstr(it + 12, ", ");
	snprintf(jc->phase, sizeof(jc->phase), "%s", ph ? ph + 2 : "");
}

/* rank r's kept lines, oldest first, into the crash's output. */
static void eg__output(eg__scan_t *s, int r)
{
	const eg__ring_t *g = r >= 0 && r < EG__RANKS ? &s->ring[r] : NULL;
	char *o = s->jc->c.output;
	size_t len = sizeof(s->jc->c.output), k = 0;

	o[0] = '\0';
	for (unsigned i = g && g->n > EG__KEEP ? g->n - EG__KEEP : 0;
	     g && i < g->n; i++)
		k += (size_t)snprintf(o + k, k < len ? len - k : 0, "%s%s",
				      k ? "\n" : "", g->line[i % EG__KEEP]);
}

/* A rank's own last words: "epgate: rank R: ended by ... in POS". */
static int eg__last_words(eg__scan_t *s, int r, const char *msg)
{
	char head[48];
	const char *in;
	int n = snprintf(head, sizeof(head), "epgate: rank %d: ", r);
	eg_crash_t *c = &s->jc->c;

	if (strncmp(msg, head, (size_t)n) || !(in = strstr(msg, " in ")))
		return 0;
	msg += n;
	if (!strncmp(msg, EG_WHERE_STOPPED, strlen(EG_WHERE_STOPPED))) {
		if (r < EG__RANKS)
			snprintf(s->stopped[r], sizeof(s->stopped[r]), "%s",
				 in + 4);
		return 1;
	}
	if (strncmp(msg, EG_WHERE_ENDED, strlen(EG_WHERE_ENDED)))
		return 0;
	if (s->ended++)
		return 1; /* the first rank to end is the cause */
	s->jc->end = EG_JOB_END_CRASH;
	c->rank = r;
	msg += strlen(EG_WHERE_ENDED);
	if (!strncmp(msg, "exit(", 5)) {
		c->status = atoi(msg + 5);
		snprintf(c->what, sizeof(c->what),
			 "rank %d ended by exit(%d) inside the workload (the "
			 "engine or its library gave up)",
			 r, c->status);
	} else {
		c->sig = atoi(msg + strlen("signal "));
		snprintf(c->what, sizeof(c->what), "rank %d ended by %.*s, %s)",
			 r, (int)(in - msg - 1), msg, strsignal(c->sig));
	}
	eg__position(s->jc, in + 4);
	eg__output(s, r);
	return 1;
}

/* "[launch] rank R killed by signal N", a peer's "still waits on ranks
 * R" or "still waiting on messages from ranks [R". */
static void eg__other(eg__scan_t *s, const char *line)
{
	const char *p;
	int r, sig;
	double d;

	if (sscanf(line, "[launch] rank %d killed by signal %d", &r, &sig) ==
		2 &&
	    s->killed < 0) {
		s->killed = r;
		s->killed_sig = sig;
	}
	if (sscanf(line, "[launch] deadline %lf s expired", &d) == 1 && d > 0)
		s->deadline = d;
	if (sscanf(line, "[launch] rank %d exited with status %d", &r, &sig) ==
		2 &&
	    s->exited < 0) {
		s->exited = r;
		s->exit_status = sig;
	}
	if (s->waited >= 0)
		return;
	if ((p = strstr(line, "still waits on ranks ")))
		s->waited = atoi(p + 21);
	else if ((p = strstr(line, "still waiting on messages from ranks [")))
		s->waited = atoi(p + 38);
	else
		return;
	eg__copy(s->wait_line, sizeof(s->wait_line), line);
}

/* A plugin's message that only says a peer failed first. */
static int eg__blames_peer(const char *m)
{
	return strstr(m, "disagree") || strstr(m, "closed its connection") ||
	       strstr(m, "stopped the job") || strstr(m, "failed earlier") ||
	       strstr(m, "a peer was lost");
}

/* The step's own line for an engine error (lib/step/step.c): "epgate
 * l2-rank: rank R: WORKLOAD: STAGE: ERROR", STAGE create, dispatch or
 * combine; the rank's line before it is the engine's message. */
static int eg__engine_error(eg__scan_t *s, int r, const char *msg)
{
	static const char *const stages[] = {"create", "dispatch", "combine"};
	char head[64], name[128], stage[24];
	const char *p;
	int n = snprintf(head, sizeof(head), ": rank %d: ", r), peer;
	const eg__ring_t *g = r < EG__RANKS ? &s->ring[r] : NULL;
	const char *last = g && g->n ? g->line[(g->n - 1) % EG__KEEP] : "";

	if (strncmp(msg, "epgate l2-", 10) || !(p = strstr(msg, head)) ||
	    sscanf(p + n, "%127[^:]: %23[^:]: ", name, stage) != 2)
		return 0;
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(stage, stages[i]))
			goto known;
	return 0;
known:
	peer = eg__blames_peer(last) || strstr(p + n, eg_strerror(EG_EPEER));
	if (!s->peer_where[0]) {
		/* "ERROR (step S of N, iteration I)": where it was */
		const char *at = strrchr(p + n, '(');

		snprintf(s->peer_where, sizeof(s->peer_where), "%s, %.*s, %s",
			 name, at ? (int)strcspn(at + 1, ")") : 11,
			 at ? at + 1 : "iteration 0", stage);
	}
	if (s->failed >= 0 && (peer || !s->failed_peer))
		return 1; /* the first, unless it only blamed a peer */
	s->failed = r;
	s->failed_peer = peer;
	eg__copy(s->fail_msg, sizeof(s->fail_msg),
		 strncmp(last, "epgate: rank ", 13) || !strstr(last, ": ")
		     ? last
		     : strstr(last + 13, ": ") + 2);
	/* "ERROR (step S of N, iteration I)" */
	p = strstr(p + n, stage) + strlen(stage) + 2;
	eg__copy(s->fail_err, sizeof(s->fail_err), p);
	char *at = strrchr(s->fail_err, '(');
	if (at && at > s->fail_err) {
		at[-1] = '\0';
		at[strcspn(at, ")")] = '\0';
	}
	snprintf(s->fail_where, sizeof(s->fail_where), "%s, %s, %s", name,
		 at ? at + 1 : "iteration 0", stage);
	return 1;
}

static void eg__line(eg__scan_t *s, char *line)
{
	char *msg;
	int r;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "[%d] ", &r) == 1 && r >= 0 &&
	    (msg = strstr(line, "] ")) && msg[1]) {
		msg += 2;
		if (eg__last_words(s, r, msg))
			return;
		eg__engine_error(s, r, msg);
		if (r < EG__RANKS) {
			eg__ring_t *g = &s->ring[r];

			eg__copy(g->line[g->n++ % EG__KEEP], EG__LINE, msg);
		}
	}
	eg__other(s, line);
}

/* A rank that died without a word (a library that reset the signal's
 * handler: SIGSEGV, SIGKILL): where its peers were when they lost it,
 * which in lockstep is where it was: the first engine error's position,
 * else a peer stopped inside a workload. */
static void eg__peers_position(eg__scan_t *s)
{
	eg_job_crash_t *jc = s->jc;
	static const char note[] = " (where its peers lost it)";
	const char *pos = s->peer_where[0] ? s->peer_where : NULL;
	size_t n;

	for (int r = 0; !pos && r < EG__RANKS; r++)
		if (strstr(s->stopped[r], ", iteration "))
			pos = s->stopped[r];
	if (!pos)
		return;
	eg__position(jc, pos);
	n = strlen(jc->c.where);
	if (*jc->workload && n + sizeof(note) <= sizeof(jc->c.where))
		memcpy(jc->c.where + n, note, sizeof(note));
}

/* Where a stopped rank was, less its workload and iteration when they
 * are those of pos0 (its phase alone, "dispatch"). */
static const char *eg__phase_of(const char *pos, const char *pos0)
{
	const char *it = strstr(pos, ", iteration "), *ph;
	size_t n;

	if (!it || !(ph = strstr(it + 12, ", ")))
		return pos;
	n = (size_t)(ph - pos);
	return strlen(pos0) > n && !strncmp(pos, pos0, n) &&
		       !strncmp(pos0 + n, ", ", 2)
		   ? ph + 2
		   : pos;
}

/* The ranks of mask as "0, 1", "0-3, 5": a run of three or more as a
 * range. */
static void eg__rank_list(uint64_t mask, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (int r = 0; r < EG__RANKS; r++) {
		int e = r;

		if (!(mask >> r & 1))
			continue;
		while (e + 1 < EG__RANKS && mask >> (e + 1) & 1)
			e++;
		if (e < r + 2)
			e = r; /* "0, 1": each on its own */
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0,
				      e > r ? "%s%d-%d" : "%s%d", k ? ", " : "",
				      r, e);
		r = e;
	}
}

/* The job's deadline stopped ranks inside a workload and nothing else
 * explains its end: every such rank hung there, none waiting on a peer
 * (a library that hangs on all ranks at once). Each one's phase, from
 * its own last words; 0 when no rank was inside a workload. */
static int eg__all_hung(eg__scan_t *s)
{
	eg_job_crash_t *jc = s->jc;
	char ranks[200], phases[300] = "";
	const char *pos0 = NULL, *ph0 = NULL;
	int same = 1, many;
	size_t q = 0;

	for (int r = 0; r < EG__RANKS; r++) {
		const char *pos = s->stopped[r], *ph;

		if (!strstr(pos, ", iteration "))
			continue;
		if (!pos0) {
			pos0 = pos;
			jc->c.rank = r;
		}
		ph = eg__phase_of(pos, pos0);
		if (!ph0)
			ph0 = ph;
		same &= !strcmp(ph, ph0);
		jc->hung |= 1ull << r;
		jc->n_hung++;
		q += (size_t)snprintf(
		    phases + q, q < sizeof(phases) ? sizeof(phases) - q : 0,
		    "%srank %d in %s", q ? ", " : "", r, ph);
	}
	if (!pos0)
		return 0;
	many = jc->n_hung > 1;
	eg__rank_list(jc->hung, ranks, sizeof(ranks));
	jc->end = EG_JOB_END_HANG;
	if (snprintf(jc->c.what, sizeof(jc->c.what),
		     "%s %s %shung %s%s%s: %s returned before the job's "
		     "deadline (%.1f s) stopped %s",
		     many ? "ranks" : "rank", ranks, many ? "all " : "",
		     same ? "in " : "(", same ? ph0 : phases, same ? "" : ")",
		     many ? "none" : "it never", s->deadline,
		     many ? "them" : "it") < 0)
		jc->c.what[0] = '\0';
	eg__position(jc, pos0);
	eg__output(s, jc->c.rank);
	return 1;
}

/* No rank said it ended: the launcher's signal, else the rank waited
 * on, where it was when stopped; else, at the job's deadline, the ranks
 * stopped inside a workload. */
static void eg__infer(eg__scan_t *s)
{
	eg_job_crash_t *jc = s->jc;
	const char *ab;

	if (s->killed >= 0) {
		jc->end = EG_JOB_END_CRASH;
		jc->c.rank = s->killed;
		jc->c.sig = s->killed_sig;
		ab = sigabbrev_np(s->killed_sig);
		snprintf(jc->c.what, sizeof(jc->c.what),
			 "rank %d killed by signal %d (%s%s%s%s)", s->killed,
			 s->killed_sig, ab ? "SIG" : "", ab ? ab : "",
			 ab ? ", " : "", strsignal(s->killed_sig));
		eg__output(s, s->killed);
	} else if (s->waited >= 0) {
		const char *said = strstr(s->wait_line, "] ");

		jc->end = EG_JOB_END_HANG;
		jc->c.rank = s->waited;
		if (snprintf(jc->c.what, sizeof(jc->c.what),
			     "rank %d did not answer its peers within the "
			     "deadline (%s)",
			     s->waited, said ? said + 2 : s->wait_line) < 0)
			jc->c.what[0] = '\0';
		eg__output(s, s->waited);
	} else if (s->failed >= 0) {
		jc->end = EG_JOB_END_ERROR;
		jc->c.rank = s->failed;
		eg__copy(jc->c.what, sizeof(jc->c.what), s->fail_err);
		eg__copy(jc->c.output, sizeof(jc->c.output), s->fail_msg);
		eg__position(jc, s->fail_where);
		return;
	} else if (s->exited >= 0) {
		/* no word from epgate on that rank (UBSan's report, then
		 * exit 1): its last lines say why */
		jc->end = EG_JOB_END_EXIT;
		jc->c.rank = s->exited;
		jc->c.status = s->exit_status;
		snprintf(jc->c.what, sizeof(jc->c.what),
			 "rank %d exited with status %d, without a word "
			 "from epgate",
			 s->exited, s->exit_status);
		eg__output(s, s->exited);
	} else {
		if (s->deadline > 0)
			eg__all_hung(s);
		return;
	}
	if (jc->c.rank < EG__RANKS && s->stopped[jc->c.rank][0])
		eg__position(jc, s->stopped[jc->c.rank]);
	else if (jc->end == EG_JOB_END_CRASH || jc->end == EG_JOB_END_EXIT)
		eg__peers_position(s);
}

int eg_job_crash_read(const char *log, eg_job_crash_t *jc)
{
	FILE *f = fopen(log, "r");
	eg__scan_t s = {
	    .jc = jc, .killed = -1, .exited = -1, .waited = -1, .failed = -1};
	char line[4096];

	memset(jc, 0, sizeof(*jc));
	jc->c.rank = jc->c.status = -1;
	if (!f)
		return EG_ENOENT;
	s.ring = calloc(EG__RANKS, sizeof(*s.ring));
	if (!s.ring) {
		fclose(f);
		return EG_ENOMEM;
	}
	while (fgets(line, sizeof(line), f))
		eg__line(&s, line);
	fclose(f);
	if (!s.ended)
		eg__infer(&s);
	free(s.ring);
	return EG_OK;
}

void eg_job_crash_line(const eg_job_crash_t *jc, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", jc->c.what, *jc->c.where ? " in " : "",
		 jc->c.where);
}

/* "ranks": [0, 1, ...] in place of one "rank". */
static void eg__hung_ranks(json_t *diag, uint64_t mask)
{
	json_t *a = json_array();

	for (int r = 0; r < EG__RANKS; r++)
		if (mask >> r & 1)
			json_array_append_new(a, json_integer(r));
	json_object_del(diag, "rank");
	json_object_set_new(diag, "ranks", a);
}

eg_status_t eg_job_crash_case(const eg_job_crash_t *jc, const eg_workload_t *w,
			      const char *repro, const char *log, int rc,
			      json_t **diag, char *msg, size_t len)
{
	eg_crash_t c = jc->c;
	int here = !strcmp(jc->workload, w->name);

	if (jc->end == EG_JOB_END_NONE)
		snprintf(c.what, sizeof(c.what),
			 "the job ended (exit %d) before this workload's "
			 "verdict, and its log names no rank that ended",
			 rc);
	if (!here) /* the log's position is another workload's */
		c.where[0] = '\0';
	*diag = eg_crash_diag(w,
			      here && *jc->phase	   ? jc->phase
			      : jc->end == EG_JOB_END_NONE ? ""
							   : "unknown",
			      here ? jc->step : 0, here ? jc->iter : w->iter,
			      &c, repro);
	json_object_set_new(*diag, "log", json_string(log ? log : ""));
	eg_job_crash_line(jc, msg, len);
	if (jc->end == EG_JOB_END_NONE || jc->end == EG_JOB_END_EXIT) {
		/* no crash of the library's that epgate saw: a job error;
		 * a rank that exited says what it printed last */
		if (jc->end == EG_JOB_END_EXIT)
			snprintf(msg, len, "%s: %s", c.what,
				 *c.output ? c.output : "(it printed nothing)");
		else
			snprintf(msg, len, "%s", c.what);
		json_object_set(*diag, "error",
				json_object_get(*diag, "crash"));
		json_object_del(*diag, "crash");
		return EG_STATUS_ERROR;
	}
	if (jc->end == EG_JOB_END_HANG) {
		json_object_set(*diag, "hang", json_object_get(*diag, "crash"));
		json_object_del(*diag, "crash");
		if (jc->n_hung > 1) /* no one rank to blame: every one hung */
			eg__hung_ranks(*diag, jc->hung);
		return EG_STATUS_FAIL;
	}
	if (jc->end == EG_JOB_END_ERROR) {
		/* as a results line says it: the engine's error, its message */
		json_object_set(*diag, "engine_error",
				json_object_get(*diag, "crash"));
		json_object_del(*diag, "crash");
		json_object_set_new(*diag, "engine_message",
				    json_string(jc->c.output));
		json_object_del(*diag, "output");
		json_object_del(*diag, "where");
		snprintf(msg, len, "%s returned \"%s\" (rank %d): %s",
			 jc->phase, jc->c.what, jc->c.rank, jc->c.output);
		return EG_STATUS_FAIL;
	}
	return EG_STATUS_CRASH;
}

const eg_workload_t *eg_job_cut_at(const eg_job_crash_t *jc,
				   const eg_workload_list_t *wl, uint32_t W,
				   const unsigned char *seen, size_t *at)
{
	size_t first = wl->n;

	for (size_t i = 0; i < wl->n; i++) {
		if (wl->items[i].world != W || seen[i])
			continue;
		if (first == wl->n)
			first = i;
		if (*jc->workload && !strcmp(wl->items[i].name, jc->workload)) {
			first = i;
			break;
		}
	}
	if (at)
		*at = first;
	return first < wl->n ? &wl->items[first] : NULL;
}
