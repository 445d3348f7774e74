/* epgate: test-and-verification suite for expert-parallel communication. */
#ifndef EPGATE_H
#define EPGATE_H

#include "epgate/error.h"
#include "epgate/dtype.h"
#include "epgate/workload.h"
#include "epgate/gen.h"
#include "epgate/layout.h"
#include "epgate/ep.h"
#include "epgate/reference.h"
#include "epgate/verify.h"
#include "epgate/engine.h"
#include "epgate/report.h"

#endif
