/* --screenshot: the page as a PNG, taken by headless Chromium (Debian's
 * chromium; $EPGATE_CHROMIUM names another) with a fresh profile in a
 * temporary folder, nothing fetched, the window as tall as the page is
 * estimated to be. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "epgate/error.h"
#include "lib/page/page.h"

#define EG__SHOT_TIMEOUT_S 120
#define EG__SHOT_WIDTH	   1400

static int eg__find_browser(char *out, size_t len)
{
	static const char *const names[] = {"chromium", "chromium-browser",
					    "google-chrome", NULL};
	const char *env = getenv("EPGATE_CHROMIUM");

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) == 0;
	}
	for (const char *const *n = names; *n; n++)
		for (const char *p = getenv("PATH"); p && *p;) {
			size_t k = strcspn(p, ":");

			snprintf(out, len, "%.*s/%s", (int)k, p, *n);
			if (k && access(out, X_OK) == 0)
				return 1;
			p += k + (p[k] == ':');
		}
	return 0;
}

/* The page's height at EG__SHOT_WIDTH pixels, roughly: two charts a
 * row, a line per table row. */
static long eg__height(const eg__page_t *pg)
{
	long h = 420 + 30 * (long)pg->n_js + 160 * (long)pg->n_fails;

	for (size_t i = 0; i < pg->n_prof; i++) {
		const eg__prof_t *p = &pg->prof[i];

		h += 160 + 44 * (long)p->gf.n_gates;
		for (size_t k = 0; p->gr && k < p->gf.n_gates; k++)
			h += p->gr[k].hard ||
				     p->gr[k].res.verdict == EG_VERDICT_FAIL
				 ? 200
				 : 0;
		for (size_t k = 0; k < p->n_su; k++)
			h += 150 + 40 * (long)p->n_su +
			     560 * (long)((p->su[k].n_charts + 1) / 2);
		for (size_t f = 0; f < p->n_cur; f++)
			h += 36 * (long)p->cur[f].n_points;
	}
	for (size_t i = 0; i < pg->n_hist; i++)
		h += 300 + 560 * (long)((pg->hist[i].n_ch + 1) / 2) +
		     30 * (long)pg->hist[i].n_runs;
	return h < 16000 ? h : 16000;
}

static int eg__rm(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int eg__spawn(const char *const *argv)
{
	int status, rc = eg__spawn_wait(argv[0], argv, "/dev/null",
					EG__SHOT_TIMEOUT_S, &status);

	if (rc < 0)
		return rc;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int eg__screenshot(const char *html, const char *png, const eg__page_t *pg,
		   char *err, size_t len)
{
	char exe[4096], abs[PATH_MAX], url[PATH_MAX + 16], prof[4200],
	    udd[4300], shot[4300], size[64];
	const char *tmp = getenv("TMPDIR");
	struct stat sb;
	int rc;

	if (!eg__find_browser(exe, sizeof(exe)))
		return eg_err_set(err, len, EG_ENOENT,
				  "needs Chromium (Debian package chromium) "
				  "in PATH or $EPGATE_CHROMIUM");
	if (!realpath(html, abs))
		return eg_err_set(err, len, EG_ENOENT, "%s: not found", html);
	snprintf(prof, sizeof(prof), "%s/epgate-chromium.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(prof))
		return eg_err_set(err, len, EG_EIO, "%s: cannot create", prof);
	snprintf(url, sizeof(url), "file://%s", abs);
	snprintf(udd, sizeof(udd), "--user-data-dir=%s", prof);
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	snprintf(size, sizeof(size), "--window-size=%d,%ld", EG__SHOT_WIDTH,
		 eg__height(pg));
	const char *argv[] = {exe,
			      "--headless",
			      "--no-sandbox",
			      "--disable-gpu",
			      "--disable-background-networking",
			      "--disable-component-update",
			      "--disable-sync",
			      "--no-first-run",
			      "--hide-scrollbars",
			      udd,
			      size,
			      shot,
			      url,
			      NULL};
	unlink(png);
	rc = eg__spawn(argv);
	nftw(prof, eg__rm, 16, FTW_DEPTH | FTW_PHYS);
	if (rc != 0 || stat(png, &sb) || sb.st_size == 0)
		return eg_err_set(err, len, EG_EIO,
				  "%s exited %d without a screenshot", exe, rc);
	return EG_OK;
}
