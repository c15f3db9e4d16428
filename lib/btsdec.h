/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * btsdec: the btscrash decoder library.  Reads trace notes from ELF cores
 * and rings from vmcores through format.h (the one decoder of
 * docs/format.md, shared with crash-ext/), classifies branches with capstone,
 * symbolizes with libdwfl, builds call histories and writes reports.
 * Used by btsdump, btsdumpd and the tests; process context, not thread-safe
 * per object.  Errors: negative errno plus a message in struct btsdec_err.
 */
#ifndef BTSDEC_H
#define BTSDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "format.h"
#include "grow.h"

/* One header per module (lib/btsdec-MODULE.h), in dependency order. */
#include "btsdec-note.h"
#include "btsdec-core.h"
#include "btsdec-writer.h"
#include "btsdec-symbol.h"
#include "btsdec-classify.h"
#include "btsdec-decode.h"
#include "btsdec-infer.h"
#include "btsdec-model.h"
#include "btsdec-trail.h"
#include "btsdec-render.h"
#include "btsdec-report.h"
#include "btsdec-json.h"
#include "btsdec-vmcore.h"
#include "btsdec-ksym.h"
#include "btsdec-vmreport.h"
#include "btsdec-recover.h"
#include "btsdec-why.h"

#endif /* BTSDEC_H */
