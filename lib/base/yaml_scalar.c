/* Typed scalars of the strict YAML reader (include/epgate/yaml_reader.h):
 * strings, words, lists of strings, and numbers through epgate/num.h so
 * that a YAML key and a command-line option speak alike.  Numbers are
 * plain scalars: a quoted "0.95" is text. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epgate/error.h"
#include "epgate/num.h"
#include "epgate/yaml_reader.h"

int eg_yaml_str(eg_yaml_t *y, const char *key, const yaml_node_t *n, char **out)
{
	const char *s = eg_yaml_scalar(n);

	if (!s)
		return eg_yaml_err(y, n, "%s: expected a string", key);
	if (!*s)
		return eg_yaml_err(y, n, "%s: empty", key);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : EG_ENOMEM;
}

/* The parser's message at the node's line. */
static int eg__num_rc(eg_yaml_t *y, const yaml_node_t *n, int rc,
		      const char *msg)
{
	return rc ? eg_yaml_err(y, n, "%s", msg) : 0;
}

static unsigned eg__text(const yaml_node_t *n)
{
	return eg_yaml_plain(n) ? 0 : EG_NUM_TEXT;
}

int eg_yaml_u64(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		uint64_t lo, uint64_t hi, uint64_t *out)
{
	char msg[512];

	if (!eg_yaml_scalar(n))
		return eg_yaml_err(y, n, "%s: expected an integer", key);
	return eg__num_rc(y, n,
			  eg_parse_u64(key, eg_yaml_scalar(n), lo, hi,
				       eg__text(n), out, msg, sizeof(msg)),
			  msg);
}

int eg_yaml_uint(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		 unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t v;
	int rc = eg_yaml_u64(y, key, n, lo, hi, &v);

	if (!rc)
		*out = (unsigned)v;
	return rc;
}

int eg_yaml_num(eg_yaml_t *y, const char *key, const yaml_node_t *n, double lo,
		double hi, unsigned flags, double *out)
{
	char msg[512];

	if (!eg_yaml_scalar(n))
		return eg_yaml_err(y, n, "%s: expected a number", key);
	flags |= EG_NUM_SIGNED | eg__text(n);
	return eg__num_rc(y, n,
			  eg_parse_double(key, eg_yaml_scalar(n), lo, hi, flags,
					  out, msg, sizeof(msg)),
			  msg);
}

int eg_yaml_bytes(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		  size_t lo, size_t hi, size_t *out)
{
	char msg[512];
	uint64_t v;
	int rc;

	if (!eg_yaml_scalar(n))
		return eg_yaml_err(y, n,
				   "%s: expected bytes (an integer with K, M "
				   "or G)",
				   key);
	rc = eg_parse_bytes(key, eg_yaml_scalar(n), lo, hi, eg__text(n), &v,
			    msg, sizeof(msg));
	if (!rc)
		*out = (size_t)v;
	return eg__num_rc(y, n, rc, msg);
}

int eg_yaml_bool(eg_yaml_t *y, const char *key, const yaml_node_t *n, int *out)
{
	const char *s = eg_yaml_plain(n) ? eg_yaml_scalar(n) : NULL;

	if (s && !strcmp(s, "true"))
		*out = 1;
	else if (s && !strcmp(s, "false"))
		*out = 0;
	else
		return eg_yaml_err(y, n, "%s: expected true or false", key);
	return 0;
}

int eg_yaml_word(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		 const char *const *words, int *idx)
{
	const char *s = eg_yaml_scalar(n);
	char list[256];

	for (int i = 0; s && words[i]; i++)
		if (!strcmp(s, words[i])) {
			*idx = i;
			return 0;
		}
	eg_yaml_words(words, list, sizeof(list));
	if (!s)
		return eg_yaml_err(y, n, "%s: expected one of %s", key, list);
	return eg_yaml_err(y, n, "unknown %s \"%s\" (%s)", key, s, list);
}

int eg_yaml_strs(eg_yaml_t *y, const char *key, const yaml_node_t *n,
		 char ***out, size_t *count)
{
	int seq = n->type == YAML_SEQUENCE_NODE;
	size_t cnt = seq ? eg_yaml_len(n) : 1;

	*out = NULL;
	*count = 0;
	if (!seq && n->type != YAML_SCALAR_NODE)
		return eg_yaml_err(y, n, "%s: expected a string or a list",
				   key);
	if (!cnt)
		return eg_yaml_err(y, n, "%s: empty list", key);
	*out = calloc(cnt + 1, sizeof(**out));
	if (!*out)
		return EG_ENOMEM;
	*count = cnt;
	for (size_t i = 0; i < cnt; i++) {
		int rc = eg_yaml_str(y, key, seq ? eg_yaml_item(y, n, i) : n,
				     &(*out)[i]);

		if (rc)
			return rc;
	}
	return 0;
}

void eg_yaml_strs_free(char **l, size_t n)
{
	for (size_t i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

int eg_yaml_is_number(const yaml_node_t *n, double *out)
{
	return eg_yaml_plain(n) &&
	       eg_parse_double(NULL, eg_yaml_scalar(n), -DBL_MAX, DBL_MAX,
			       EG_NUM_SIGNED, out, NULL, 0) == 0;
}
