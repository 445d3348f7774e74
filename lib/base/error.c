#include <stdarg.h>
#include <stdio.h>

#include "epgate/error.h"

const char *eg_strerror(int err)
{
	switch (err) {
	case EG_OK:
		return "success";
#define EG__ERR_MSG(name, val, msg)                                            \
	case EG_##name:                                                        \
		return msg;
		EG_ERRNO_MAP(EG__ERR_MSG)
#undef EG__ERR_MSG
	}
	return "unknown error";
}

const char *eg_err_name(int err)
{
	switch (err) {
	case EG_OK:
		return "EG_OK";
#define EG__ERR_NAME(name, val, msg)                                           \
	case EG_##name:                                                        \
		return "EG_" #name;
		EG_ERRNO_MAP(EG__ERR_NAME)
#undef EG__ERR_NAME
	}
	return "EG_UNKNOWN";
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
