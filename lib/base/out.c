/* Appending formatted text to a fixed buffer (include/epgate/out.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "epgate/out.h"

void eg_out_init(eg_out_t *o, char *buf, size_t len)
{
	o->buf = buf;
	o->len = len;
	o->pos = 0;
	if (buf && len)
		buf[0] = '\0';
}

void eg_out_put(eg_out_t *o, const char *fmt, ...)
{
	size_t room = o->pos < o->len ? o->len - o->pos : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	/* an encoding error (or an absurd length): full, and it stays so */
	if (n < 0 || (size_t)n > SIZE_MAX - o->pos)
		o->pos = SIZE_MAX;
	else
		o->pos += (size_t)n;
}

int eg_out_full(const eg_out_t *o)
{
	return o->pos >= o->len;
}
