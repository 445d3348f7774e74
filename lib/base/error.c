#include <stdarg.h>
#include <stdio.h>

#include "epgate/error.h"

/* Each code's name and message, indexed by -code (the codes are 0, -1,
 * -2, ...). */
static const struct eg__err {
	const char *name, *msg;
} eg__errs[] = {
    /* 0 is not in the map */
    [0] = {"EG_OK", "success"},
#define EG__ERR_ROW(name, val, msg) [-(val)] = {"EG_" #name, msg},
    EG_ERRNO_MAP(EG__ERR_ROW)
#undef EG__ERR_ROW
};

/* err's row; NULL for a value that is no code. */
static const struct eg__err *eg__err_row(int err)
{
	int n = (int)(sizeof(eg__errs) / sizeof(eg__errs[0]));

	if (err > 0 || err <= -n || !eg__errs[-err].name)
		return NULL;
	return &eg__errs[-err];
}

const char *eg_strerror(int err)
{
	const struct eg__err *r = eg__err_row(err);

	return r ? r->msg : "unknown error";
}

const char *eg_err_name(int err)
{
	const struct eg__err *r = eg__err_row(err);

	return r ? r->name : "EG_UNKNOWN";
}

int eg_err_set(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}
