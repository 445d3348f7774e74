/* Small things every part of the page needs: escaping, numbers as
 * shown, verdict words, units. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/page/page.h"

void eg__page_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		const char *e = *s == '&'    ? "&amp;"
				: *s == '<'  ? "&lt;"
				: *s == '>'  ? "&gt;"
				: *s == '"'  ? "&quot;"
				: *s == '\'' ? "&#39;"
					     : NULL;

		if (e)
			fputs(e, f);
		else
			fputc(*s, f);
	}
}

void eg__html(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		if (fmt[0] == '%' && fmt[1] == 's')
			eg__page_esc(f, va_arg(ap, const char *));
		else if (fmt[0] == '%' && fmt[1] == '%')
			fputc('%', f);
		else {
			fputc(*fmt, f);
			continue;
		}
		fmt++;
	}
	va_end(ap);
}

const char *eg__page_gres_word(const eg__gres_t *g)
{
	if (g->hard)
		return "error";
	return eg_gate_verdict_name(g->res.verdict);
}

const char *eg__page_unit(const char *metric)
{
	const eg_metric_info_t *m = eg_metric_info(metric);

	return m && m->unit ? m->unit : "";
}
