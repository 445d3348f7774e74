/* Out-of-band bootstrap: small-blob collectives through a TCP rendezvous
 * at rank 0, scoped to the job by its secret. Every call has a deadline;
 * on expiry it fails with EG_ETIMEDOUT and eg_boot_error() names the
 * ranks still missing. A peer that dies gives EG_EPEER naming it. */
#ifndef EPGATE_BOOT_H
#define EPGATE_BOOT_H

#include <stddef.h>

#include "epgate/world.h"

typedef struct eg_boot eg_boot_t;

/* Rank 0 listens (boot_fd if inherited, else boot_host:boot_port) and
 * accepts exactly size-1 peers that present the secret; strangers are
 * refused and logged on stderr. Others connect (retrying until the
 * deadline). */
int eg_boot_open(eg_boot_t **b, const eg_world_t *w, double timeout_s);
/* all = size * len bytes, rank r's blob at r * len. */
int eg_boot_allgather(eg_boot_t *b, const void *mine, size_t len, void *all,
		      double timeout_s);
int eg_boot_bcast(eg_boot_t *b, void *buf, size_t len, unsigned root,
		  double timeout_s);
int eg_boot_barrier(eg_boot_t *b, double timeout_s);
/* Last error as one line ("allgather: deadline 5.0 s expired; rank 0
 * still waits on ranks 2, 3"). */
const char *eg_boot_error(const eg_boot_t *b);
void eg_boot_close(eg_boot_t *b);

#endif
