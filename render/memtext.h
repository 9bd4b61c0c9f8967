/* Text built in memory through stdio (open_memstream) without losing a
 * failure: a memory stream that cannot grow drops what is written and only
 * says so through ferror or fclose, so every memory text goes through here. */
#ifndef LOCKSIM_MEMTEXT_H
#define LOCKSIM_MEMTEXT_H

#include <stddef.h>
#include <stdio.h>

struct memtext {
    FILE *f;    /* write here between open and close; owned until memtext_close */
    char *buf;  /* after a successful close: the text, NUL-terminated, freed by the caller with free() */
    size_t len; /* bytes in buf, without the NUL */
};

/* 0, or LSIM_ENOMEM when the stream cannot be made (m->f is then NULL). */
int memtext_open(struct memtext *m);
/* Closes m->f (NULL is allowed: a failed open). 0 with m->buf the whole
 * text, or LSIM_ENOMEM when any write or the close could not allocate; then
 * m->buf is freed and NULL. */
int memtext_close(struct memtext *m);

#endif
