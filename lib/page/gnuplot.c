/* Charts drawn by gnuplot's SVG terminal: every chart of a page goes
 * into one script (its data as inline data blocks) in a temporary
 * folder, one gnuplot run draws them all, and each SVG is inlined into
 * the page with its ids prefixed by the chart's (several SVGs share one
 * document).  gnuplot: $EPGATE_GNUPLOT (a path; "none" for no charts),
 * else the first gnuplot in PATH. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epgate/error.h"
#include "epgate/file.h"
#include "lib/page/page.h"

#define EG__GP_TIMEOUT_S 120
#define EG__SVG_MAX	 ((size_t)16 << 20)

static const char *const eg__palette[] = {
    "#1f77b4", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
};
#define EG__PASS_RGB "#2ca02c"
#define EG__FAIL_RGB "#d62728"

/* Gate lines: greens for gates that passed, reds for those that
 * failed, one shade per gate of the chart. */
static const char *const eg__pass_rgb[] = {"#2ca02c", "#138d90", "#6b8e23"};
static const char *const eg__fail_rgb[] = {"#d62728", "#a50f15", "#e7298a"};

const char *eg__page_series_rgb(int color)
{
	return eg__palette[(unsigned)color % 8];
}

int eg__page_series_dt(const eg__series_t *s)
{
	return s->dash > 0 ? s->dash : 1;
}

const char *eg__page_mark_rgb(const eg__mark_t *m)
{
	switch (m->kind) {
	case EG__MK_TIE:
		return "#555555";
	case EG__MK_REF:
		return eg__palette[(unsigned)m->color % 8];
	case EG__MK_VLINE:
		return m->fail ? EG__FAIL_RGB : "#1f77b4";
	default:
		return m->fail ? eg__fail_rgb[(unsigned)m->color % 3]
			       : eg__pass_rgb[(unsigned)m->color % 3];
	}
}

int eg__page_mark_dt(const eg__mark_t *m)
{
	return m->kind == EG__MK_TIE ? 3 : m->kind == EG__MK_REF ? 1 : 2;
}

/* The gnuplot to run; 0 when there is none. */
static int eg__gnuplot_path(char *out, size_t len)
{
	const char *env = getenv("EPGATE_GNUPLOT");
	const char *path = getenv("PATH");

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return strcmp(env, "none") && access(out, X_OK) == 0;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(out, len, "%.*s/gnuplot", (int)n, path);
		if (n && access(out, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

/* A gnuplot single-quoted string ('' for '; no newlines). */
static void eg__gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
	fputc('\'', f);
}

/* A double-quoted string: line breaks as \n (tic labels on two lines). */
static void eg__gp_dstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s != '\r')
			fputc(*s, f);
	}
	fputc('"', f);
}

/* An x coordinate as gnuplot takes it (a time axis wants a string). */
static void eg__gp_x(FILE *f, const eg__chart_t *c, double x)
{
	if (c->timex)
		fprintf(f, "first '%.0f'", x);
	else
		fprintf(f, "first %.17g", x);
}

/* The x offset of series si on a categorical axis, so that arms at one
 * category sit side by side instead of on top of each other. */
static double eg__jitter(const eg__chart_t *c, size_t si)
{
	double w = c->n_s > 6 ? 0.3 : 0.16;

	if (!c->cat || c->by_arm || c->n_s < 2)
		return 0;
	return w * ((double)si / (double)(c->n_s - 1) - 0.5);
}

static void eg__data(FILE *f, const eg__chart_t *c)
{
	for (size_t i = 0; i < c->n_s; i++) {
		fprintf(f, "$%ss%zu << EOD\n", c->id, i);
		for (size_t j = 0; j < c->s[i].n; j++) {
			const eg__cpt_t *p = &c->s[i].p[j];
			int ci = isfinite(p->lo) && isfinite(p->hi);

			fprintf(f, "%.17g %.17g %.17g %.17g %d\n",
				p->x + eg__jitter(c, i), p->y,
				ci ? p->lo : p->y, ci ? p->hi : p->y, p->st);
		}
		fputs("EOD\n", f);
	}
}

typedef struct eg__range {
	double lo, hi;
} eg__range_t;

static void eg__widen(eg__range_t *r, double v, int log)
{
	if (!isfinite(v) || (log && v <= 0))
		return;
	r->lo = v < r->lo ? v : r->lo;
	r->hi = v > r->hi ? v : r->hi;
}

/* Pads a range: a fraction of its span, or its ratio on a log axis. */
static void eg__pad(eg__range_t *r, int log, double frac, int nonneg)
{
	if (!isfinite(r->lo)) {
		r->lo = log ? 0.1 : 0;
		r->hi = log ? 10 : 1;
	} else if (log) {
		double k = r->hi > r->lo ? pow(r->hi / r->lo, frac) : 2;

		r->lo /= k;
		r->hi *= k;
	} else {
		double d = r->hi > r->lo ? (r->hi - r->lo) * frac
					 : (r->lo ? fabs(r->lo) * 0.1 : 1);

		r->lo = nonneg && r->lo >= 0 && r->lo - d < 0 ? 0 : r->lo - d;
		r->hi += d;
	}
}

/* A threshold far from every value (a 200 ms budget over 2 ms steps)
 * would squash the data into a line: it is left off the chart, and the
 * legend says where it is. */
static int eg__reach(const eg__range_t *d, double v, int log)
{
	double span = d->hi - d->lo;

	if (!isfinite(d->lo))
		return 0;
	if (log)
		return v < d->lo / 8 ? -1 : v > d->hi * 8;
	if (span < 0.1 * fmax(fabs(d->lo), fabs(d->hi)))
		span = 0.1 * fmax(fabs(d->lo), fabs(d->hi));
	return v < d->lo - 3 * span ? -1 : v > d->hi + 3 * span;
}

/* The y range holds every value and interval, and the thresholds
 * within reach of them. */
static eg__range_t eg__yrange(eg__chart_t *c)
{
	eg__range_t r = {INFINITY, -INFINITY}, d;
	int nonneg = 1;

	for (size_t i = 0; i < c->n_s; i++)
		for (size_t j = 0; j < c->s[i].n; j++) {
			const eg__cpt_t *p = &c->s[i].p[j];

			eg__widen(&r, p->y, c->logy);
			eg__widen(&r, p->lo, c->logy);
			eg__widen(&r, p->hi, c->logy);
			nonneg &= !(p->y < 0);
		}
	for (size_t i = 0; i < c->n_m; i++) /* a ratio's tie line: always */
		if (c->m[i].kind == EG__MK_TIE)
			eg__widen(&r, c->m[i].a, c->logy);
	d = r;
	for (size_t i = 0; i < c->n_m; i++) {
		eg__mark_t *m = &c->m[i];

		if (m->kind == EG__MK_VLINE || m->kind == EG__MK_TIE)
			continue;
		/* a failed gate's threshold is the news: always drawn */
		m->off = m->fail ? 0 : eg__reach(&d, m->a, c->logy);
		if (m->kind == EG__MK_BAND) {
			int b = m->fail ? 0 : eg__reach(&d, m->b, c->logy);

			/* a band is off only when all of it is */
			m->off = m->off == b ? b : 0;
			if (!b)
				eg__widen(&r, m->b, c->logy);
			if (m->fail || !eg__reach(&d, m->a, c->logy))
				eg__widen(&r, m->a, c->logy);
			continue;
		}
		if (!m->off)
			eg__widen(&r, m->a, c->logy);
	}
	eg__pad(&r, c->logy, 0.08, nonneg);
	return r;
}

static eg__range_t eg__xrange(const eg__chart_t *c)
{
	eg__range_t r = {INFINITY, -INFINITY};

	if (c->cat)
		return (eg__range_t){-0.6, (double)c->n_cats - 0.4};
	for (size_t i = 0; i < c->n_s; i++)
		for (size_t j = 0; j < c->s[i].n; j++)
			eg__widen(&r, c->s[i].p[j].x, c->logx);
	for (size_t i = 0; i < c->n_m; i++) {
		eg__widen(&r, c->m[i].x0, c->logx);
		eg__widen(&r, c->m[i].x1, c->logx);
	}
	if (c->timex && r.hi - r.lo < 60)
		r.lo -= 1800, r.hi += 1800;
	eg__pad(&r, c->logx, c->logx ? 0.12 : 0.05, 0);
	return r;
}

/* Tics at the values measured (up to 12), or the categories. */
static void eg__xtics(FILE *f, const eg__chart_t *c)
{
	double v[12];
	size_t n = 0;

	if (c->timex) {
		fputs("set xdata time\nset timefmt '%s'\n"
		      "set format x \"%m-%d\\n%H:%M\"\n",
		      f);
		if (!c->n_tic)
			return;
	}
	if (c->cat) {
		fputs("set xtics (", f);
		for (size_t i = 0; i < c->n_cats; i++) {
			fputs(i ? ", " : "", f);
			eg__gp_str(f, c->cats[i]);
			fprintf(f, " %zu", i);
		}
		fputs(")\n", f);
		return;
	}
	for (size_t i = 0; i < c->n_s && n <= 12; i++)
		for (size_t j = 0; j < c->s[i].n && n <= 12; j++) {
			size_t k = 0;

			while (k < n && v[k] != c->s[i].p[j].x)
				k++;
			if (k == n && n < 12)
				v[n] = c->s[i].p[j].x;
			n += k == n;
		}
	if (c->n_tic) {
		fputs("set xtics (", f);
		for (size_t i = 0; i < c->n_tic; i++) {
			fputs(i ? ", " : "", f);
			eg__gp_dstr(f, c->tic_l[i]);
			if (c->timex) /* a time axis takes its format */
				fprintf(f, " '%.0f'", c->tic_v[i]);
			else
				fprintf(f, " %.17g", c->tic_v[i]);
		}
		fputs(")\n", f);
		return;
	}
	if (n > 12 || !n)
		return;
	fputs("set xtics (", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s'%g' %.17g", i ? ", " : "", v[i], v[i]);
	fputs(")\n", f);
}

/* Log y: tics at 1, 2 and 5 times the powers of ten in range. */
static void eg__ytics_log(FILE *f, double lo, double hi)
{
	static const double m[] = {1, 2, 5};
	int n = 0;

	fputs("set ytics (", f);
	for (double p = pow(10, floor(log10(lo))); p <= hi; p *= 10)
		for (int i = 0; i < 3; i++) {
			double v = p * m[i];

			if (v < lo || v > hi)
				continue;
			/* 20k, 5M: not 2e+04 */
			if (v >= 1e9)
				fprintf(f, "%s'%gG' %.17g", n++ ? ", " : "",
					v / 1e9, v);
			else if (v >= 1e6)
				fprintf(f, "%s'%gM' %.17g", n++ ? ", " : "",
					v / 1e6, v);
			else if (v >= 1e4)
				fprintf(f, "%s'%gk' %.17g", n++ ? ", " : "",
					v / 1e3, v);
			else
				fprintf(f, "%s'%g' %.17g", n++ ? ", " : "", v,
					v);
		}
	fputs(")\n", f);
}

/* A line of a mark across the plot at y = a. */
static void eg__hline(FILE *f, double a, const char *rgb, int dt, double lw)
{
	fprintf(f,
		"set arrow from graph 0, first %.17g to graph 1, first %.17g "
		"nohead front lc rgb '%s' dt %d lw %.1f\n",
		a, a, rgb, dt, lw);
}

/* The accepted side of a bound, lightly shaded. */
static void eg__shade(FILE *f, const eg__mark_t *m)
{
	int lo = m->kind == EG__MK_MIN;

	fprintf(f,
		"set object rect from graph 0, %s %.17g to graph 1, %s %.17g "
		"behind fc rgb '%s' fs transparent solid %s noborder\n",
		lo || m->kind == EG__MK_BAND ? "first" : "graph",
		lo || m->kind == EG__MK_BAND ? m->a : 0, lo ? "graph" : "first",
		lo			 ? 1
		: m->kind == EG__MK_BAND ? m->b
					 : m->a,
		EG__PASS_RGB, m->kind == EG__MK_BAND ? "0.10" : "0.07");
}

/* The shading and lines of every mark (their legend is the page's). */
static void eg__marks(FILE *f, const eg__chart_t *c, const eg__range_t *y)
{
	for (size_t i = 0; i < c->n_m; i++) {
		const eg__mark_t *m = &c->m[i];
		const char *rgb = eg__page_mark_rgb(m);
		int dt = eg__page_mark_dt(m);

		if (m->off)
			continue;
		switch (m->kind) {
		case EG__MK_BAND:
			eg__shade(f, m);
			if (m->a >= y->lo)
				eg__hline(f, m->a, rgb, dt, 1.6);
			if (m->b <= y->hi)
				eg__hline(f, m->b, rgb, dt, 1.6);
			break;
		case EG__MK_MIN:
		case EG__MK_MAX:
			eg__shade(f, m);
			eg__hline(f, m->a, rgb, dt, 1.6);
			break;
		case EG__MK_TIE:
		case EG__MK_REF:
			eg__hline(f, m->a, rgb, dt, 1.4);
			break;
		case EG__MK_VLINE:
			fputs("set arrow from ", f);
			eg__gp_x(f, c, m->x0);
			fputs(", graph 0 to ", f);
			eg__gp_x(f, c, m->x0);
			fprintf(
			    f,
			    ", graph 1 nohead front lc rgb '%s' dt %d lw 2\n",
			    rgb, dt);
			break;
		default: /* targets */
			fputs("set arrow from ", f);
			eg__gp_x(f, c, m->x0);
			fprintf(f, ", first %.17g to ", m->a);
			eg__gp_x(f, c, m->x1);
			fprintf(f,
				", first %.17g nohead front lc rgb '%s' dt %d "
				"lw 2.2\n",
				m->a, rgb, dt);
		}
	}
}

/* The plot: each series with its intervals, judged points green or
 * red on top. */
static void eg__plot(FILE *f, const eg__chart_t *c)
{
	fputs("plot \\\n  ", f);
	for (size_t i = 0; i < c->n_s; i++) {
		int st[3] = {0, 0, 0};

		/* categories are not a continuum: no line between them */
		fprintf(f,
			"$%ss%zu u 1:2:3:4 w %s lc rgb '%s' dt %d lw 2 pt 7 "
			"ps %s notitle, \\\n  ",
			c->id, i, c->cat ? "yerrorbars" : "yerrorlines",
			eg__page_series_rgb(c->s[i].color),
			eg__page_series_dt(&c->s[i]), c->cat ? "1.1" : "0.7");
		for (size_t j = 0; j < c->s[i].n; j++)
			st[c->s[i].p[j].st % 3] = 1;
		for (int k = 1; k <= 2; k++)
			if (st[k])
				fprintf(f,
					"$%ss%zu u 1:($5==%d?$2:1/0) w p pt 7 "
					"ps 1.4 lc rgb '%s' notitle, \\\n  ",
					c->id, i, k,
					k == 1 ? EG__PASS_RGB : EG__FAIL_RGB);
	}
	fputs("NaN notitle\n", f);
}

/* One chart's settings, data and plot. */
static int eg__chart_script(FILE *f, eg__chart_t *c, const char *dir)
{
	eg__range_t x = eg__xrange(c), y = eg__yrange(c);

	fprintf(f, "reset\nset encoding utf8\nset output '%s/%s.svg'\n", dir,
		c->id);
	eg__data(f, c);
	fputs("set title ", f);
	eg__gp_str(f, c->title);
	fputs(" font ',13'\nset xlabel ", f);
	eg__gp_str(f, c->xlabel);
	fprintf(f, " offset 0,%s\nset ylabel ", c->n_tic ? "-0.6" : "0");
	eg__gp_str(f, c->ylabel);
	fputs("\nset grid xtics ytics lc rgb '#e0e0e0' lt 1\n"
	      "set border 3 lc rgb '#444444'\nset tics nomirror\n"
	      "unset key\n",
	      f);
	if (c->logx)
		fputs("set logscale x 2\n", f);
	if (c->logy) {
		fputs("set logscale y 10\n", f);
		eg__ytics_log(f, y.lo, y.hi);
	}
	eg__xtics(f, c);
	if (c->timex)
		fprintf(f, "set xrange ['%.0f':'%.0f']\n", x.lo, x.hi);
	else
		fprintf(f, "set xrange [%.17g:%.17g]\n", x.lo, x.hi);
	fprintf(f, "set yrange [%.17g:%.17g]\n", y.lo, y.hi);
	eg__marks(f, c, &y);
	eg__plot(f, c);
	fputs("unset output\n", f);
	return ferror(f) ? EG_EIO : EG_OK;
}

/* gnuplot SCRIPT, its output into LOG; killed after a while (the alarm
 * survives exec). Returns its exit status, or <0. */
static int eg__run(const char *gp, const char *script, const char *log)
{
	const char *argv[] = {"gnuplot", script, NULL};
	int status,
	    rc = eg__spawn_wait(gp, argv, log, EG__GP_TIMEOUT_S, &status);

	if (rc < 0)
		return rc;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Length of an id-like token inside quotes at s that needs the prefix:
 * after id=' id=" href='# href="# url(# . */
static size_t eg__ref_at(const char *s)
{
	static const char *const pre[] = {"id='",     "id=\"", "href='#",
					  "href=\"#", "url(#", NULL};

	for (const char *const *p = pre; *p; p++)
		if (!strncmp(s, *p, strlen(*p)))
			return strlen(*p);
	return 0;
}

/* The SVG from its <svg ...> on, ids prefixed with the chart's. */
static char *eg__inline(const char *path, const eg__chart_t *c)
{
	char *text = NULL, *out = NULL, err[256];
	size_t len = 0, olen = 0;
	FILE *o;
	const char *s;

	if (eg_file_read(path, EG__SVG_MAX, &text, &len, err, sizeof(err)))
		return NULL;
	s = strstr(text, "<svg");
	o = s ? open_memstream(&out, &olen) : NULL;
	for (; o && *s; s++) {
		size_t k = eg__ref_at(s);

		if (!strncmp(s, "<title>Gnuplot</title>", 22)) {
			fputs("<title>", o);
			eg__page_esc(o, c->title);
			fputs("</title>", o);
			s += 21;
			continue;
		}
		fputc(*s, o);
		if (k) {
			fwrite(s + 1, 1, k - 1, o);
			fprintf(o, "%s-", c->id);
			s += k - 1;
		}
	}
	if (o)
		fclose(o);
	free(text);
	return out;
}

/* The first line of gnuplot's log that says what went wrong. */
static void eg__log_line(const char *log, char *msg, size_t len)
{
	char line[400];
	FILE *f = fopen(log, "r");

	snprintf(msg, len, "gnuplot failed");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "rror") || strstr(line, "line ")) {
			snprintf(msg, len, "gnuplot: %s", line);
			break;
		}
	}
	if (f)
		fclose(f);
}

/* Leaves the folder alone with EPGATE_KEEP_CHARTS set (to debug a
 * chart: the script, the SVGs and gnuplot's log stay). */
static void eg__rmdir(const char *dir, eg__chart_t *const *c, size_t n)
{
	char path[4200];

	if (getenv("EPGATE_KEEP_CHARTS")) {
		fprintf(stderr, "epgate report: charts kept in %s\n", dir);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s.svg", dir, c[i]->id);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/charts.gp", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/gnuplot.log", dir);
	unlink(path);
	rmdir(dir);
}

int eg__gnuplot_draw(eg__chart_t *const *charts, size_t n, char *msg,
		     size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char gp[4096], dir[4096], script[4200], log[4200], svg[4200];
	FILE *f;
	int rc = EG_OK;

	if (!eg__gnuplot_path(gp, sizeof(gp))) {
		snprintf(msg, len,
			 "charts need gnuplot (Debian package gnuplot-nox), "
			 "not found%s",
			 getenv("EPGATE_GNUPLOT") ? " at $EPGATE_GNUPLOT" : "");
		return 0;
	}
	if (!n)
		return 1;
	snprintf(dir, sizeof(dir), "%s/epgate-charts.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(msg, len, "%s: cannot make a temporary folder", dir);
		return EG_EIO;
	}
	snprintf(script, sizeof(script), "%s/charts.gp", dir);
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	f = fopen(script, "w");
	if (f)
		fputs("set terminal svg size 640,470 dynamic noenhanced "
		      "font 'DejaVu Sans,11' background rgb 'white'\n",
		      f);
	for (size_t i = 0; f && !rc && i < n; i++) {
		eg__chart_sort(charts[i]);
		rc = eg__chart_script(f, charts[i], dir);
	}
	if (!f || fclose(f) || rc) {
		snprintf(msg, len, "%s: cannot write the chart script", script);
		eg__rmdir(dir, charts, n);
		return rc ? rc : EG_EIO;
	}
	if (eg__run(gp, script, log) != 0) {
		eg__log_line(log, msg, len);
		rc = EG_ESYS;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		snprintf(svg, sizeof(svg), "%s/%s.svg", dir, charts[i]->id);
		charts[i]->svg = eg__inline(svg, charts[i]);
	}
	eg__rmdir(dir, charts, n);
	return rc ? rc : 1;
}
