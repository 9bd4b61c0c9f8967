/* The UTF-8 check shared by the JSON, XML and terminal writers (text.h). */
#include "text.h"

#include <stdio.h>
#include <string.h>

size_t text_utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f; /* no UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return len;
}

char *text_term(char *out, size_t n, const char *s) {
    size_t o = 0, len = strlen(s);
    for (size_t i = 0; i < len;) {
        const unsigned char *p = (const unsigned char *)s + i;
        size_t l = text_utf8_len(p, len - i);
        char esc[8];
        size_t k;
        if (l == 1 && *p >= 0x20 && *p != 0x7f) k = 0;
        else if (l == 2 && p[0] == 0xc2 && p[1] < 0xa0) k = (size_t)snprintf(esc, sizeof esc, "\\u%04x", p[1]);
        else if (l == 0 || l == 1) k = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *p);
        else k = 0;
        size_t take = l ? l : 1, w = k ? k : take;
        if (o + w >= n) break;
        memcpy(out + o, k ? esc : (const char *)p, w);
        o += w;
        i += take;
    }
    out[o] = '\0';
    return out;
}
