/* Text from inputs (file names, titles, event text) made safe for where it
 * goes: the one UTF-8 check every writer of JSON, XML and terminal text
 * uses, so that bytes that are not UTF-8 are written as U+FFFD everywhere. */
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

#endif
