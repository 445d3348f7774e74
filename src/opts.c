/* The one command-line parser and the shared option groups (opts.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/nccl.h"
#include "epgate/transport.h"
#include "epgate/num.h"
#include "epgate/report.h"
#include "src/cmd.h"
#include "src/opts.h"

/* Option ids: the command's own are letters or 256..599. */
enum {
	EG__O_HELP = 'h',
	EG__O_ITERS = 600,
	EG__O_WARMUP,
	EG__O_TIMEOUT,
	EG__O_TRANSPORT = 610,
	EG__O_PROVIDER,
	EG__O_NUM_COMMS,
	EG__O_PATH,
	EG__O_XNODE,
	EG__O_DEVICE,
	EG__O_REPORTS = 620,
	EG__O_TAP,
	EG__O_JUNIT,
	EG__O_TAP_VERSION,
	EG__O_RESULTS = 630,
	EG__O_GATES,
	EG__O_LAUNCHES,
	EG__O_REMEASURE,
	EG__O_SEED,
	EG__O_OWN = 700,       /* + index in the command's own table */
	EG__O_WORKLOAD = 1000, /* + index in eg__workload_keys */
};

#define EG__OPTS_MAX 96

static const char *const eg__workload_keys[] = {
    "name",   "world",	    "experts",	   "topk", "hidden",	"dtype",
    "tokens", "zero_ranks", "routing",	   "mask", "data",	"seed",
    "iter",   "steps",	    "step_tokens", "dup",  "nonfinite", NULL,
};

/* A group's options: (name, has_arg, id, key bit). */
typedef struct eg__gopt {
	const char *name;
	int id;
	unsigned key;
} eg__gopt_t;

static const eg__gopt_t eg__job_opts[] = {
    {"iters", EG__O_ITERS, EG_JOB_ITERS},
    {"warmup", EG__O_WARMUP, EG_JOB_WARMUP},
    {"timeout", EG__O_TIMEOUT, EG_JOB_TIMEOUT},
    {NULL, 0, 0},
};
static const eg__gopt_t eg__xport_opts[] = {
    {"transport", EG__O_TRANSPORT, EG_XP_TRANSPORT},
    {"provider", EG__O_PROVIDER, EG_XP_PROVIDER},
    {"num-comms", EG__O_NUM_COMMS, EG_XP_NUM_COMMS},
    {"path", EG__O_PATH, EG_XP_PATH},
    {"xnode-mode", EG__O_XNODE, EG_XP_XNODE},
    {"device", EG__O_DEVICE, EG_XP_DEVICE},
    {NULL, 0, 0},
};
static const eg__gopt_t eg__campaign_opts[] = {
    {"results", EG__O_RESULTS, 1},   {"gates", EG__O_GATES, 1},
    {"launches", EG__O_LAUNCHES, 1}, {"remeasure", EG__O_REMEASURE, 1},
    {"seed", EG__O_SEED, 1},	     {NULL, 0, 0},
};
static const eg__gopt_t eg__report_opts[] = {
    {"reports", EG__O_REPORTS, EG_REP_REPORTS},
    {"tap", EG__O_TAP, EG_REP_TAP},
    {"junit", EG__O_JUNIT, EG_REP_JUNIT},
    {NULL, 0, 0},
};

int eg_cmd_sub(const char *parent, const char *name, eg_cmd_fn *run, int argc,
	       char **argv)
{
	char prog[64];

	snprintf(prog, sizeof(prog), "%s %s", parent, name);
	argv[0] = prog;
	return run(argc, argv);
}

int eg_cli_error(const eg_cli_t *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", c->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EG_EXIT_HARD;
}

/* The base parsers (lib/base/num.c) do the work and word the message:
 * one number parser, one message shape, here as everywhere.  The value
 * goes to u or, when u is NULL, to z. */
typedef int eg__u64_parser_t(const char *what, const char *s, uint64_t lo,
			     uint64_t hi, unsigned flags, uint64_t *out,
			     char *err, size_t errlen);

static int eg__cli_u64(const eg_cli_t *c, eg__u64_parser_t *parse,
		       const char *opt, const char *s, uint64_t lo, uint64_t hi,
		       unsigned *u, size_t *z)
{
	char err[256];
	uint64_t v;
	int rc = parse(opt, s ? s : "", lo, hi, 0, &v, err, sizeof(err));

	if (rc < 0) {
		eg_cli_error(c, "%s", err);
		return rc;
	}
	if (u)
		*u = (unsigned)v;
	else
		*z = (size_t)v;
	return EG_OK;
}

int eg_cli_uint(const eg_cli_t *c, const char *opt, const char *s,
		unsigned long long lo, unsigned long long hi, unsigned *out)
{
	return eg__cli_u64(c, eg_parse_u64, opt, s, lo, hi, out, NULL);
}

int eg_cli_bytes(const eg_cli_t *c, const char *opt, const char *s, size_t lo,
		 size_t hi, size_t *out)
{
	return eg__cli_u64(c, eg_parse_bytes, opt, s, lo, hi, NULL, out);
}

int eg_cli_real(const eg_cli_t *c, const char *opt, const char *s, double lo,
		double hi, double *out)
{
	char err[256];
	int rc = eg_parse_double(opt, s ? s : "", lo, hi, EG_NUM_LO_OPEN, out,
				 err, sizeof(err));

	if (rc < 0)
		eg_cli_error(c, "%s", err);
	return rc;
}

int eg_cli_choice(const eg_cli_t *c, const char *opt, const char *s,
		  const char *const *choices)
{
	char want[256] = "";
	size_t len = 0;

	for (int i = 0; choices[i]; i++) {
		if (s && !strcmp(s, choices[i]))
			return i;
		len += (size_t)snprintf(
		    want + len, sizeof(want) - len, "%s%s",
		    i ? (choices[i + 1] ? ", " : " or ") : "", choices[i]);
		if (len >= sizeof(want))
			break;
	}
	eg_cli_error(c, "%s \"%s\": want %s", opt, s ? s : "", want);
	return EG_EINVAL;
}

/* ---- groups ---------------------------------------------------------- */

/* spelled: the option as given ("--iters", "-n"). */
static int eg__job(eg_cli_t *c, int id, const char *spelled, const char *arg)
{
	eg_job_opts_t *j = c->job;
	int rc;

	switch (id) {
	case EG__O_ITERS:
		rc = eg_cli_uint(c, spelled, arg, 1, 1000000, &j->iters);
		j->given |= EG_JOB_ITERS;
		return rc;
	case EG__O_WARMUP:
		rc = eg_cli_uint(c, spelled, arg, 0, 1000000, &j->warmup);
		j->given |= EG_JOB_WARMUP;
		return rc;
	default:
		rc = eg_cli_real(c, spelled, arg, 0, 86400, &j->timeout_s);
		j->given |= EG_JOB_TIMEOUT;
		return rc;
	}
}

const eg_job_opts_t eg_cli_bench_job = {
    .keys = EG_JOB_ALL, .nw = 1, .iters = 20, .timeout_s = 60};

unsigned eg_cli_bench_warmup(const eg_job_opts_t *j, int nccl)
{
	if (j->given & EG_JOB_WARMUP)
		return j->warmup;
	return nccl ? 5 : 3;
}

static int eg__nonempty(const eg_cli_t *c, const char *opt, const char *arg,
			const char **out)
{
	if (!*arg) {
		eg_cli_error(c, "%s: empty", opt);
		return EG_EINVAL;
	}
	*out = arg;
	return EG_OK;
}

static int eg__xport(eg_cli_t *c, int id, const char *arg)
{
	static const char *const transports[] = {"fabric", "nccl", NULL};
	static const char *const modes[] = {"hostid", "nop2p", NULL};
	eg_xport_cli_t *x = c->xport;
	eg_nccl_path_t p;
	int i;

	x->given |= 1u << (id - EG__O_TRANSPORT);
	switch (id) {
	case EG__O_TRANSPORT:
		if ((i = eg_cli_choice(c, "--transport", arg, transports)) < 0)
			return i;
		x->transport = transports[i];
		return EG_OK;
	case EG__O_PROVIDER:
		return eg__nonempty(c, "--provider", arg, &x->provider);
	case EG__O_NUM_COMMS:
		return eg_cli_uint(c, "--num-comms", arg, 1, EG_COMMS_MAX,
				   &x->num_comms);
	case EG__O_PATH:
		if (eg_nccl_path_parse(arg, &p) < 0) {
			eg_cli_error(
			    c, "--path \"%s\": want auto, nvlink or xnode",
			    arg);
			return EG_EINVAL;
		}
		x->path = eg_nccl_path_name(p);
		return EG_OK;
	case EG__O_XNODE:
		if ((i = eg_cli_choice(c, "--xnode-mode", arg, modes)) < 0)
			return i;
		x->xnode_mode = modes[i];
		return EG_OK;
	default: {
		unsigned d = 0;
		int rc = eg_cli_uint(c, "--device", arg, 0, 1023, &d);

		x->device = (int)d;
		return rc;
	}
	}
}

static int eg__report(eg_cli_t *c, int id, const char *arg)
{
	eg_report_cli_t *r = c->report;

	if (id == EG__O_REPORTS)
		return eg__nonempty(c, "--reports", arg, &r->reports);
	if (id == EG__O_TAP)
		return eg__nonempty(c, "--tap", arg, &r->tap);
	if (id == EG__O_TAP_VERSION) {
		/* process-wide: every TAP file this command writes */
		static const char *const v[] = {"13", "14", NULL};
		int i = eg_cli_choice(c, "--tap-version", arg, v);

		return i < 0 ? i : eg_tap_set_version(i ? 14 : 13);
	}
	return eg__nonempty(c, "--junit", arg, &r->junit);
}

static int eg__workload(eg_cli_t *c, int id, const char *arg)
{
	eg_overrides_t *o = c->workload;

	if (o->n >= EG_OVERRIDES_MAX) {
		eg_cli_error(c, "too many workload options (max %d)",
			     EG_OVERRIDES_MAX);
		return EG_ERANGE;
	}
	o->key[o->n] = eg__workload_keys[id - EG__O_WORKLOAD];
	o->val[o->n] = arg;
	o->n++;
	return EG_OK;
}

static int eg__campaign(eg_cli_t *c, int id, const char *arg)
{
	eg_bench_run_opts_t *r = c->campaign;
	unsigned u;

	switch (id) {
	case EG__O_RESULTS:
		r->results = arg;
		return EG_OK;
	case EG__O_GATES:
		r->gates = arg;
		return EG_OK;
	case EG__O_LAUNCHES:
		return eg_cli_uint(c, "--launches", arg, 1, 1000, &r->launches);
	case EG__O_REMEASURE:
		if (eg_cli_uint(c, "--remeasure", arg, 0, 10, &u) < 0)
			return EG_EINVAL;
		r->remeasure = u ? (int)u : -1;
		return EG_OK;
	default:
		if (eg_cli_uint(c, "--seed", arg, 1, 4294967295u, &u) < 0)
			return EG_EINVAL;
		r->seed = u;
		return EG_OK;
	}
}

/* ---- the table and the loop ------------------------------------------ */

static int eg__add(struct option *t, size_t *n, const char *name, int has_arg,
		   int id)
{
	if (*n + 1 >= EG__OPTS_MAX)
		return EG_ERANGE;
	t[*n] = (struct option){name, has_arg, NULL, id};
	(*n)++;
	return EG_OK;
}

static int eg__add_group(struct option *t, size_t *n, const eg__gopt_t *g,
			 unsigned keys)
{
	int rc = EG_OK;

	for (; g->name && rc == EG_OK; g++)
		if (keys & g->key)
			rc = eg__add(t, n, g->name, required_argument, g->id);
	return rc;
}

static int eg__table(const eg_cli_t *c, struct option *t)
{
	size_t n = 0;
	int rc = eg__add(t, &n, "help", no_argument, EG__O_HELP);

	for (int i = 0; c->own && c->own[i].name && !rc; i++)
		rc = eg__add(t, &n, c->own[i].name,
			     c->own[i].flag || c->own[i].bare
				 ? no_argument
				 : required_argument,
			     EG__O_OWN + i);
	if (c->job && !rc)
		rc = eg__add_group(t, &n, eg__job_opts, c->job->keys);
	if (c->xport && !rc)
		rc = eg__add_group(t, &n, eg__xport_opts, c->xport->keys);
	if (c->report && !rc)
		rc = eg__add_group(t, &n, eg__report_opts, c->report->keys);
	if (c->campaign && !rc)
		rc = eg__add_group(t, &n, eg__campaign_opts, 1);
	/* every command that writes reports writes TAP */
	if (c->report && !rc)
		rc = eg__add(t, &n, "tap-version", required_argument,
			     EG__O_TAP_VERSION);
	for (int k = 0; c->workload && eg__workload_keys[k] && !rc; k++)
		rc = eg__add(t, &n, eg__workload_keys[k], required_argument,
			     EG__O_WORKLOAD + k);
	memset(&t[n], 0, sizeof(t[n]));
	return rc;
}

/* An own option that needs no code (eg_cli_opt_t): EG_OK, <0 after a
 * message, or 1: not one, the command's parse takes it. */
static int eg__stored(const eg_cli_t *c, const eg_cli_opt_t *o, const char *arg)
{
	char opt[64];
	int i;

	if (o->id > 0 && o->id < 256)
		snprintf(opt, sizeof(opt), "-%c", o->id);
	else
		snprintf(opt, sizeof(opt), "--%s", o->name);
	if (o->flag) {
		*o->flag = 1;
		return EG_OK;
	}
	if (o->str && o->choices) {
		if ((i = eg_cli_choice(c, opt, arg, o->choices)) < 0)
			return i;
		*o->str = o->choices[i];
		return EG_OK;
	}
	if (o->str) {
		*o->str = arg;
		return EG_OK;
	}
	if (o->uint)
		return eg_cli_uint(c, opt, arg, (unsigned long long)o->lo,
				   (unsigned long long)o->hi, o->uint);
	if (o->real)
		return eg_cli_real(c, opt, arg, o->lo, o->hi, o->real);
	if (o->list && *o->n >= o->max) {
		eg_cli_error(c, "%s: at most %zu", opt, o->max);
		return EG_EINVAL;
	}
	if (o->list) {
		o->list[(*o->n)++] = arg;
		return EG_OK;
	}
	return 1;
}

/* The command's own option id (EG__O_OWN + index, or a short letter). */
static int eg__own(eg_cli_t *c, int id, const char *arg)
{
	const eg_cli_opt_t *o = NULL;
	int rc;

	if (id >= EG__O_OWN)
		o = &c->own[id - EG__O_OWN];
	for (int i = 0; !o && c->own && c->own[i].name; i++)
		if (c->own[i].id == id)
			o = &c->own[i];
	if (o && (rc = eg__stored(c, o, arg)) <= 0)
		return rc;
	if (!c->parse) {
		eg_cli_error(c, "option %d has no handler (harness)", id);
		return EG_EINVAL;
	}
	return c->parse(c, o ? o->id : id, arg);
}

static int eg__one(eg_cli_t *c, int id, const char *arg)
{
	if (id >= EG__O_WORKLOAD)
		return eg__workload(c, id, arg);
	if (id >= EG__O_OWN)
		return eg__own(c, id, arg);
	if (id >= EG__O_RESULTS)
		return eg__campaign(c, id, arg);
	if (id >= EG__O_REPORTS)
		return eg__report(c, id, arg);
	if (id >= EG__O_TRANSPORT)
		return eg__xport(c, id, arg);
	if (id >= EG__O_ITERS)
		return eg__job(c, id,
			       id == EG__O_ITERS    ? "--iters"
			       : id == EG__O_WARMUP ? "--warmup"
						    : "--timeout",
			       arg);
	if (c->job && c->job->nw && (id == 'n' || id == 'w'))
		return eg__job(c, id == 'n' ? EG__O_ITERS : EG__O_WARMUP,
			       id == 'n' ? "-n" : "-w", arg);
	return eg__own(c, id, arg);
}

/* The arguments left after the options. */
static int eg__positional(eg_cli_t *c, int argc, char **argv)
{
	if (c->stop_at_args || c->max_args == EG_CLI_ARGS_ALL) {
		c->rest = optind;
		c->n_args = (unsigned)(argc - optind);
		return EG_CLI_GO;
	}
	for (int i = optind; i < argc; i++) {
		if (c->n_args >= c->max_args || c->n_args >= EG_CLI_ARGS_MAX)
			return eg_cli_error(c, "unexpected argument \"%s\"",
					    argv[i]);
		c->arg[c->n_args++] = argv[i];
	}
	return EG_CLI_GO;
}

/* The groups' defaults: the same for every command that takes them. */
static void eg__defaults(eg_cli_t *c)
{
	if (c->xport)
		*c->xport = (eg_xport_cli_t){.keys = c->xport->keys,
					     .transport = "fabric",
					     .num_comms = 1,
					     .path = "auto",
					     .device = -1};
	if (c->report && (c->report->keys & EG_REP_REPORTS))
		c->report->reports = "reports/runs";
	if (c->campaign) {
		c->campaign->apply_gates = 1;
		c->campaign->progress = -1;
		c->max_args = 1;
		c->need_arg = "give a profile: NAME or FILE";
	}
}

/* getopt's short options: the own options whose id is a letter (with a
 * value unless flag or bare), and the job group's -n and -w. */
static void eg__shorts(const eg_cli_t *c, char *s, size_t size)
{
	size_t n =
	    (size_t)snprintf(s, size, "%s:h%s", c->stop_at_args ? "+" : "",
			     c->job && c->job->nw ? "n:w:" : "");

	for (int i = 0; c->own && c->own[i].name && n + 3 <= size; i++) {
		const eg_cli_opt_t *o = &c->own[i];

		if (o->id <= 0 || o->id >= 256)
			continue;
		s[n++] = (char)o->id;
		if (!o->flag && !o->bare)
			s[n++] = ':';
		s[n] = '\0';
	}
}

int eg_cli_parse(eg_cli_t *c, int argc, char **argv)
{
	struct option t[EG__OPTS_MAX];
	char shorts[64];
	int id;

	if (!c->prog)
		c->prog = argv[0];
	if (eg__table(c, t) < 0)
		return eg_cli_error(c, "too many options (harness)");
	eg__shorts(c, shorts, sizeof(shorts));
	c->n_args = 0;
	eg__defaults(c);
	optind = 0; /* a fresh scan (GNU: re-reads the optstring's mode) */
	opterr = 0;
	while ((id = getopt_long(argc, argv, shorts, t, NULL)) != -1) {
		if (id == EG__O_HELP) {
			if (c->usage)
				fputs(c->usage, stdout);
			return EG_EXIT_PASS;
		}
		if (id == ':')
			return eg_cli_error(c,
					    "%s needs a value; see '%s --help'",
					    argv[optind - 1], c->prog);
		if (id == '?') {
			if (optopt && optopt < 256)
				return eg_cli_error(c,
						    "unknown option \"-%c\"; "
						    "see '%s --help'",
						    optopt, c->prog);
			return eg_cli_error(
			    c, "unknown option \"%s\"; see '%s --help'",
			    argv[optind - 1], c->prog);
		}
		if (eg__one(c, id, optarg) < 0)
			return EG_EXIT_HARD;
	}
	id = eg__positional(c, argc, argv);
	if (id == EG_CLI_GO && c->need_arg && !c->n_args)
		return eg_cli_error(c, "%s", c->need_arg);
	return id;
}
