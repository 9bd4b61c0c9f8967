/* The error table's lookups: message, name and exit status of a code. */
#include "error.h"

#include <errno.h>
#include <string.h>

#define ROW_(name, status, msg) {#name, status, msg},
static const struct {
    const char *name;
    int status;
    const char *msg;
} rows[] = {LSIM_ERRNO_MAP(ROW_)};
#undef ROW_

enum { NROWS = (int)(sizeof rows / sizeof rows[0]) };
_Static_assert(LSIM_ERR_LAST_ - LSIM_ERR_FIRST_ - 1 == NROWS, "one row per code");

static int row_of(int code) {
    int i = code - LSIM_ERR_FIRST_ - 1;
    return i >= 0 && i < NROWS ? i : -1;
}

const char *lsim_strerror(int code) {
    if (code == LSIM_OK) return "success";
    int i = row_of(code);
    return i < 0 ? "unknown error" : rows[i].msg;
}

const char *lsim_errname(int code) {
    if (code == LSIM_OK) return "OK";
    int i = row_of(code);
    return i < 0 ? "UNKNOWN" : rows[i].name;
}

int lsim_exit_status(int code) {
    if (code == LSIM_OK) return 0;
    int i = row_of(code);
    return i < 0 ? 70 : rows[i].status;
}

int lsim_errcode(const char *name) {
    for (int i = 0; i < NROWS; i++)
        if (strcmp(rows[i].name, name) == 0) return LSIM_ERR_FIRST_ + 1 + i;
    return LSIM_OK;
}

const char *lsim_exit_meaning(int st) {
#define EXIT_CASE_(status, meaning) \
    case status: return meaning;
    switch (st) { LSIM_EXIT_MAP(EXIT_CASE_) }
#undef EXIT_CASE_
    return NULL;
}

int lsim_errno_code(int errnum, int otherwise) { return errnum == ENOMEM ? LSIM_ENOMEM : otherwise; }
