/* Appending formatted text to a fixed buffer, snprintf style: the buffer
 * always holds a terminated string (cut where it ran out of room) and
 * the length the whole text would have is kept, so a writer checks for
 * overflow once at the end instead of after every call. */
#ifndef EPGATE_OUT_H
#define EPGATE_OUT_H

#include <stddef.h>

typedef struct eg_out {
	char *buf;
	size_t len; /* buf's size */
	size_t pos; /* length of all that was put, written or not */
} eg_out_t;

/* buf empty (when there is one: buf NULL or len 0 only counts). */
void eg_out_init(eg_out_t *o, char *buf, size_t len);
void eg_out_put(eg_out_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether some of what was put did not fit. */
int eg_out_full(const eg_out_t *o);

#endif
