/* Traces as JSON Lines (docs/trace-format.md): a header object, then one
 * object per event. The writer's output is canonical, so write -> read ->
 * write gives the same bytes. A trace recorded against real lock services
 * can be written in this format and then checked and drawn like a simulated
 * one. */
#ifndef LOCKSIM_TRACE_JSONL_H
#define LOCKSIM_TRACE_JSONL_H

#include <stddef.h>
#include <stdio.h>

#include "trace.h"

#define TRACE_JSONL_FORMAT "locksim-trace"

/* Write tr (borrowed, read only): its header and every stored event.
 * Text that is not valid UTF-8 is written with U+FFFD in place of each bad
 * byte. Returns 0; -1 when the trace cannot be written faithfully (a node
 * kind or event kind without a name, a node index out of range, an empty
 * or duplicate node name; nothing is written then), when out of memory, or
 * on a write error. */
int trace_write_jsonl(FILE *out, const struct trace *tr);

/* Parse text (len bytes, not necessarily NUL-terminated) in exactly the
 * format trace_write_jsonl writes, strictly: every key required (except an
 * event's "text"), no unknown or duplicate keys, integers only, seq
 * counting from 0, t_ns within [0, SIM_TIME_MAX] and never decreasing, node
 * names known. Lines end in "\n" (a "\r" before it is allowed).
 * tr must be initialised with trace_init(tr, 1) and empty. A trace written
 * by locksim already carries the checker's findings; to check a foreign
 * trace, read it, then append its events to a fresh trace with the same
 * nodes that has a checker attached (docs/trace-format.md, "Checking a
 * recorded trace"). Nodes, title, algo, seed and events are filled in;
 * event text is owned by tr (trace_intern). Returns 0, or -1 with a message
 * "line N: ..." in err (errlen bytes, may be 0), in which case tr holds
 * what was read before the error and must still be closed by trace_close. */
int trace_read_jsonl(struct trace *tr, const char *text, size_t len, char *err, size_t errlen);

#endif
