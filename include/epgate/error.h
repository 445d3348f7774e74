/* epgate error codes: one X-macro table, negative values, libuv style. */
#ifndef EPGATE_ERROR_H
#define EPGATE_ERROR_H

#include <stddef.h>

/* X(name, value, message) */
#define EG_ERRNO_MAP(X)                                                        \
	X(EINVAL, -1, "invalid argument")                                      \
	X(ENOMEM, -2, "out of memory")                                         \
	X(EIO, -3, "input/output error")                                       \
	X(EPARSE, -4, "malformed input")                                       \
	X(ERANGE, -5, "value out of range")                                    \
	X(ENOSYS, -6, "not supported")                                         \
	X(EMISMATCH, -7, "result does not match the reference")                \
	X(ENOENT, -8, "no such file or entry")                                 \
	X(ECUDA, -9, "CUDA error")                                             \
	X(EXML, -10, "XML library error")                                      \
	X(EJSON, -11, "JSON library error")                                    \
	X(ETIMEDOUT, -12, "deadline expired")                                  \
	X(EPEER, -13, "a peer failed or went away")                            \
	X(EAUTH, -14, "authentication failed")                                 \
	X(EFABRIC, -15, "fabric error")                                        \
	X(ESYS, -16, "system call failed")                                     \
	X(EPLUGIN, -17, "the plugin under test reported an error")             \
	X(ECRASH, -18, "the process under test ended (a signal or exit())")    \
	X(EGROWTH, -19, "resources grew past their bound")

typedef enum eg_errno {
	EG_OK = 0,
#define EG__ERR_ENUM(name, val, msg) EG_##name = (val),
	EG_ERRNO_MAP(EG__ERR_ENUM)
#undef EG__ERR_ENUM
} eg_errno_t;

/* Message for an eg_errno_t value; never NULL. */
const char *eg_strerror(int err);
/* Symbolic name ("EG_EINVAL"); never NULL. */
const char *eg_err_name(int err);
/* One line of message into err (nothing when err is NULL or len 0);
 * returns rc, so that "return eg_err_set(err, len, EG_EINVAL, ...)"
 * reports and fails in one step. */
int eg_err_set(char *err, size_t len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Exit codes, automake's convention. */
enum {
	EG_EXIT_PASS = 0,
	EG_EXIT_FAIL = 1,
	EG_EXIT_SKIP = 77,
	EG_EXIT_HARD = 99,
};

#endif
