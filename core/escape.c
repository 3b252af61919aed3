/* Terminal-safe text (core/escape.h). */
#include "core/escape.h"

#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 character at p that is not a control (2 to 4 bytes), or 0. */
static size_t utf8_char(const unsigned char *p) {
  const unsigned char c = p[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3;
  else if (c >= 0xF0 && c <= 0xF4) n = 4;
  else return 0;
  if (c == 0xC2) lo = 0xA0;      /* U+0080-U+009F are the C1 controls */
  else if (c == 0xE0) lo = 0xA0; /* overlong */
  else if (c == 0xED) hi = 0x9F; /* surrogates */
  else if (c == 0xF0) lo = 0x90; /* overlong */
  else if (c == 0xF4) hi = 0x8F; /* past U+10FFFF */
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return n;
}

char *av_escape_text(const char *s, char *buf, size_t size) {
  if (!size) return buf;
  size_t used = 0;
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t n = *p >= 0x20 && *p < 0x7F ? 1 : *p >= 0x80 ? utf8_char(p) : 0;
    if (n) {
      if (used + n >= size) break;
      memcpy(buf + used, p, n);
      used += n;
      p += n;
    } else {
      if (used + 4 >= size) break;
      snprintf(buf + used, 5, "\\x%02x", *p++);
      used += 4;
    }
  }
  buf[used] = '\0';
  return buf;
}
