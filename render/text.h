/* Text from inputs (file names, titles, event text) made safe for where it
 * goes: the one UTF-8 check every writer of JSON, XML and terminal text
 * uses, so that bytes that are not UTF-8 are written as U+FFFD (JSON, XML)
 * or "\xHH" (terminal), and no control character reaches a terminal. */
#ifndef LOCKSIM_TEXT_H
#define LOCKSIM_TEXT_H

#include <stddef.h>

/* Length (1 to 4) of the valid UTF-8 sequence that starts s (n > 0 bytes
 * left), or 0 when s does not start one: a stray continuation byte, an
 * overlong form, a UTF-16 surrogate, a code point above U+10FFFF, or a
 * sequence cut by the end. */
size_t text_utf8_len(const unsigned char *s, size_t n);

/* U+FFFD REPLACEMENT CHARACTER in UTF-8, written for each bad byte. */
#define TEXT_REPLACEMENT "\xef\xbf\xbd"

/* s made safe to print on a terminal, into out (n > 0 bytes, NUL-terminated,
 * cut before an escape that does not fit): valid UTF-8 is kept as it is; a
 * C0 control character, DEL or a byte that is not UTF-8 is written "\xHH"
 * (ESC is "\x1b"), and a C1 control (U+0080 to U+009F) "\u0085". Returns
 * out. */
char *text_term(char *out, size_t n, const char *s);

#endif
