/* Text built in memory through stdio, failures kept (memtext.h). */
#include "memtext.h"

#include <stdlib.h>

#include "error.h"

int memtext_open(struct memtext *m) {
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f ? 0 : LSIM_ENOMEM;
}

int memtext_close(struct memtext *m) {
    int bad = !m->f;
    if (m->f) {
        bad = ferror(m->f) != 0;
        if (fclose(m->f) != 0) bad = 1;
        m->f = NULL;
    }
    if (bad || !m->buf) {
        free(m->buf);
        m->buf = NULL;
        m->len = 0;
        return LSIM_ENOMEM;
    }
    return 0;
}
