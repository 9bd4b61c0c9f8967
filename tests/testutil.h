/* Shared includes for the cmocka test binaries (one binary per module). */
#ifndef LOCKSIM_TESTUTIL_H
#define LOCKSIM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#endif
