/* One table of error codes for the whole program, in the manner of libuv's
 * UV_ERRNO_MAP: each row gives the code's name, the exit status the command
 * line maps it to (sysexits.h values, documented in README.md and --help)
 * and a short message. Fallible functions return 0 or a negative LSIM_E*
 * code; the message with its place (file:line:col) travels separately, in
 * the caller's error buffer (struct scn_error). */
#ifndef LOCKSIM_ERROR_H
#define LOCKSIM_ERROR_H

/* XX(NAME, exit status, message) */
/* clang-format off */
#define LSIM_ERRNO_MAP(XX)                                                              \
    XX(SKIPPED, 0, "this algorithm cannot run this scenario's script: skipped")         \
    XX(EXPECT, 1, "an expectation failed")                                              \
    XX(TRUNCATED, 1, "the run was cut short before its duration; nothing was decided")  \
    XX(USAGE, 64, "usage error (bad command line)")                                     \
    XX(UNKNOWN_OPTION, 64, "unknown option")                                            \
    XX(BAD_VALUE, 64, "bad option value")                                               \
    XX(PLUGIN, 64, "the algorithm plugin cannot be used")                               \
    XX(PARSE, 65, "malformed scenario")                                                 \
    XX(NOINPUT, 66, "input file not found or unreadable")                               \
    XX(NODISPLAY, 69, "no display to open a window on")                                 \
    XX(UNAVAILABLE, 69, "a service the command starts is not installed or will not start") \
    XX(NOTREAL, 69, "the scenario has a fault this backend cannot make real: refused")   \
    XX(NOMEM, 70, "out of memory")                                                      \
    XX(INTERNAL, 70, "internal error")                                                  \
    XX(OUTPUT, 73, "an output file cannot be written")                                 \
    XX(INTERRUPTED, 130, "interrupted by a signal; what finished is reported")
/* clang-format on */

/* XX(status, meaning): every exit status the command line gives, once; `locksim
 * help` prints this table and README.md's copy is checked against it. Every
 * status of LSIM_ERRNO_MAP is a row here (lsim_exit_meaning() finds it). */
/* clang-format off */
#define LSIM_EXIT_MAP(XX) \
    XX(0, "run completed and every expect holds") \
    XX(1, "an expect line failed, or the run was cut short by max-events " "(TRUNCATED: nothing is decided); for real: a real verdict differed from the simulated one") \
    XX(64, "usage error: a bad command line, an unknown --set key, an algorithm " "plugin refused") \
    XX(65, "malformed input (a scenario, trace or shard file): file:line:col: " "what is wrong, and what was expected, on stderr") \
    XX(66, "an input file not found or unreadable") \
    XX(69, "no display for view (draw with render instead); for real: redis-server " "missing, or a scenario it cannot make real (refused, saying why)") \
    XX(70, "internal error: out of memory anywhere, or a run past its --time-limit") \
    XX(73, "an output file (--trace, --out, standard output) cannot be written (a " "full disk, a closed pipe)") \
    XX(130, "interrupted (Ctrl-C, SIGTERM, SIGHUP): what finished is reported, an " "--out file is left as it was")
/* clang-format on */

enum lsim_err {
    LSIM_OK = 0,
    LSIM_ERR_FIRST_ = -1000,
#define LSIM_ERR_ENUM_(name, status, msg) LSIM_E##name,
    LSIM_ERRNO_MAP(LSIM_ERR_ENUM_)
#undef LSIM_ERR_ENUM_
            LSIM_ERR_LAST_
};

/* The row's message, or "unknown error" for a code not in the table. */
const char *lsim_strerror(int code);
/* The row's name without its prefix ("NOMEM"), or "UNKNOWN". */
const char *lsim_errname(int code);
/* The code whose name (as lsim_errname gives it) is name, or LSIM_OK when
 * no row has that name. */
int lsim_errcode(const char *name);
/* The meaning of exit status st (a row of LSIM_EXIT_MAP), or NULL. */
const char *lsim_exit_meaning(int st);
/* The exit status the command line gives for code (0 for LSIM_OK, 70 for a
 * code not in the table). */
int lsim_exit_status(int code);
/* The code for a failed system call's errno: LSIM_ENOMEM for ENOMEM (an
 * fopen, fdopen, opendir or dlopen that could not allocate is out of memory,
 * whatever the call was for), otherwise the caller's code for that call. */
int lsim_errno_code(int errnum, int otherwise);

#endif
