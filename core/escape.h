/* Text from users (names, labels, paths, messages quoting them) made safe for a terminal:
 * control characters could move the cursor, recolour the screen or forge table rows. */
#ifndef AV_ESCAPE_H
#define AV_ESCAPE_H

#include <stddef.h>

/* Room for a 127-character name with every byte escaped. */
#define AV_ESCAPE_NAME_SIZE 512

/* `s` with C0 controls (tab and line feed included), DEL, C1 controls (U+0080-U+009F) and
 * bytes that are not valid UTF-8 written as \xNN, one per byte; everything else, printable
 * UTF-8 included, as it is. Cut to fit `size` like snprintf, never inside an escape or a
 * character. Returns buf. */
char *av_escape_text(const char *s, char *buf, size_t size);

#endif
