/* The strict YAML reader behind profiles and gate files: one document
 * through libyaml's document API, whose nodes carry their marks, so every
 * message names file:line.  Strict: one document, no aliases, a nesting
 * depth and a size limit checked before libyaml builds the document
 * (its flow nesting costs quadratic time), plain scalars for numbers,
 * mapping keys that are plain words and never repeat.
 *
 * Messages: "NAME:LINE: ..."; typed getters say "KEY: ..." after that
 * with the value (the number shapes of epgate/num.h).  Every error is
 * EG_EPARSE (EG_ENOMEM when memory runs out, EG_ENOENT/EG_EIO from
 * load). */
#ifndef EPGATE_YAML_READER_H
#define EPGATE_YAML_READER_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "epgate/num.h" /* EG_NUM_* flags of eg_yaml_num */

/* Limits: far above any real profile or gate file (a few KB, five
 * levels deep). */
#define EG_YAML_MAX_BYTES ((size_t)256 << 10)
#define EG_YAML_MAX_DEPTH 32

typedef struct eg_yaml {
	yaml_document_t doc;
	int loaded;
	char name[4096]; /* the path or name in messages */
	char *err;	 /* where the getters' messages go */
	size_t errlen;
} eg_yaml_t;

/* Parses text (len bytes): what names the kind of file in messages
 * ("gate file": "empty gate file", "a gate file holds one").  On success, free
 * with eg_yaml_fini; on error there is nothing to free. */
int eg_yaml_parse(eg_yaml_t *y, const char *text, size_t len, const char *name,
		  const char *what, char *err, size_t errlen);
/* Reads path (up to EG_YAML_MAX_BYTES) and parses it. */
int eg_yaml_load(eg_yaml_t *y, const char *path, const char *what, char *err,
		 size_t errlen);
void eg_yaml_fini(eg_yaml_t *y);
yaml_node_t *eg_yaml_root(eg_yaml_t *y);
/* The whole life of a document: parses text (or reads the file name when
 * text is NULL), hands its root to fn, frees it.  The loader's code, or
 * fn's. */
typedef int (*eg_yaml_fn)(eg_yaml_t *y, yaml_node_t *root, void *arg);
int eg_yaml_read(const char *text, size_t len, const char *name,
		 const char *what, eg_yaml_fn fn, void *arg, char *err,
		 size_t errlen);

/* "NAME:LINE: message" into the error buffer; returns EG_EPARSE.  The
 * node's line (line 1 for NULL), or a line given. */
int eg_yaml_err(eg_yaml_t *y, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int eg_yaml_err_at(eg_yaml_t *y, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int eg_yaml_line(const yaml_node_t *n);

/* ---- structure ------------------------------------------------------ */

/* Items of a sequence, pairs of a mapping, else 0. */
size_t eg_yaml_len(const yaml_node_t *n);
yaml_node_t *eg_yaml_item(eg_yaml_t *y, const yaml_node_t *seq, size_t i);
yaml_node_t *eg_yaml_key(eg_yaml_t *y, const yaml_node_t *map, size_t i);
yaml_node_t *eg_yaml_value(eg_yaml_t *y, const yaml_node_t *map, size_t i);
/* The value of key in a mapping checked by eg_yaml_mapping, or NULL. */
yaml_node_t *eg_yaml_get(eg_yaml_t *y, const yaml_node_t *map, const char *key);
/* The text of a scalar node; NULL for anything else (or NULL). */
const char *eg_yaml_scalar(const yaml_node_t *n);
/* A scalar written without quotes. */
int eg_yaml_plain(const yaml_node_t *n);

/* A mapping whose keys are scalars and never repeat: "WHAT: expected a
 * mapping", "WHAT: keys must be plain words", "key \"K\" repeats line
 * N".  what may be NULL (no prefix). */
int eg_yaml_mapping(eg_yaml_t *y, const char *what, const yaml_node_t *n);
/* The same, and every key one of allowed (NULL-terminated): "WHAT:
 * unknown key \"K\" (a, b, c)". */
int eg_yaml_keys(eg_yaml_t *y, const char *what, const yaml_node_t *n,
		 const char *const *allowed);
/* "a, b, c" of a NULL-terminated list, into buf. */
const char *eg_yaml_words(const char *const *words, char *buf, size_t len);

/* ---- typed scalars (key names the value in messages) ---------------- */

/* A non-empty scalar, copied into *out (a previous *out is freed). */
int eg_yaml_str(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		char **out);
/* Plain scalars through epgate/num.h: unsigned decimal, a number with
 * an optional sign (flags: EG_NUM_LO_OPEN, EG_NUM_HI_OPEN), bytes. */
int eg_yaml_u64(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		uint64_t lo, uint64_t hi, uint64_t *out);
int eg_yaml_uint(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		 unsigned lo, unsigned hi, unsigned *out);
int eg_yaml_num(eg_yaml_t *y, const char *key, const yaml_node_t *n, double lo,
		double hi, unsigned flags, double *out);
int eg_yaml_bytes(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		  size_t lo, size_t hi, size_t *out);
/* Plain true or false. */
int eg_yaml_bool(eg_yaml_t *y, const char *key, const yaml_node_t *n, int *out);
/* One of words (NULL-terminated); *idx = its index.  "unknown KEY \"S\"
 * (a, b, c)". */
int eg_yaml_word(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		 const char *const *words, int *idx);
/* A string or a non-empty list of strings -> a NULL-terminated array
 * (*out, *count; free with eg_yaml_strs_free, also after an error). */
int eg_yaml_strs(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		 char ***out, size_t *count);
void eg_yaml_strs_free(char **l, size_t n);
/* A plain scalar that is a finite decimal number (no message). */
int eg_yaml_is_number(const yaml_node_t *n, double *out);

#endif
