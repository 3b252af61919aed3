/* Shared plumbing of the `anvil` subcommands: option parsing into error values of the
 * public API, the one-line error printer, and the command-line forms of heads and
 * assignments. */
#include "cli/args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"

int av_cli_error(anvil_error_t *err, int code, const char *source, const char *path,
                 const char *fmt, ...) {
  if (!err || err->code != ANVIL_OK) return code;
  /* the library's error: source, key path and message as long as it holds them, joined and
   * escaped as its one line is */
  char src[512], key[256], msg[768], raw[sizeof src + sizeof key + sizeof msg + 8];
  snprintf(src, sizeof src, "%s", source ? source : "");
  snprintf(key, sizeof key, "%s", path ? path : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t n = 0;
  raw[0] = '\0';
  if (src[0]) n += (size_t)snprintf(raw + n, sizeof raw - n, "%s: ", src);
  if (key[0]) n += (size_t)snprintf(raw + n, sizeof raw - n, "%s: ", key);
  snprintf(raw + n, sizeof raw - n, "%s", msg);
  char line[1700];
  snprintf(err->message, sizeof err->message, "%s", anvil_escape_text(raw, line, sizeof line));
  err->code = code;
  return code;
}

void av_cli_error_clear(anvil_error_t *err) {
  err->code = ANVIL_OK;
  err->message[0] = '\0';
}

int av_cli_fail_public(const anvil_error_t *err) {
  /* the message cut where the library's one line is cut */
  fprintf(stderr, "anvil: %.1699s\n", err->message[0] ? err->message : "unknown error");
  int cls = anvil_status_class(err->code);
  return cls ? cls : 2;
}

void av_cli_parser_init(av_cli_parser_t *ps, int argc, char **argv, const av_cli_opt_t *opts) {
  ps->argc = argc;
  ps->argv = argv;
  ps->i = 1;
  ps->opts = opts;
  ps->only_positional = 0;
}

static void opt_names(const av_cli_opt_t *opts, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int k = 0; opts[k].name && used < size; k++)
    used += (size_t)snprintf(out + used, size - used, "%s--%s", k ? ", " : "", opts[k].name);
}

static int usage_error(av_cli_parser_t *ps, const char *opt, const char *what, anvil_error_t *err) {
  char names[512];
  opt_names(ps->opts, names, sizeof names);
  av_cli_error(err, ANVIL_ERR_USAGE, ps->argv[0], opt, "%s; options: %s (see anvil %s --help)",
               what, names, ps->argv[0]);
  return -2;
}

int av_cli_next_arg(av_cli_parser_t *ps, const char **value, anvil_error_t *err) {
  *value = NULL;
  if (ps->i >= ps->argc) return -1;
  const char *a = ps->argv[ps->i++];
  if (ps->only_positional || a[0] != '-' || a[1] == '\0') {
    *value = a;
    return 0;
  }
  if (strcmp(a, "--") == 0) {
    ps->only_positional = 1;
    return av_cli_next_arg(ps, value, err);
  }
  const av_cli_opt_t *o = NULL;
  const char *inline_val = NULL;
  if (a[1] == '-') {
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (int k = 0; ps->opts[k].name; k++)
      if (strlen(ps->opts[k].name) == len && strncmp(ps->opts[k].name, name, len) == 0)
        o = &ps->opts[k];
    if (o && eq) inline_val = eq + 1;
  } else {
    for (int k = 0; ps->opts[k].name; k++)
      if (ps->opts[k].key == (unsigned char)a[1]) o = &ps->opts[k];
    if (o && a[2]) inline_val = a + 2;
  }
  if (!o) return usage_error(ps, a, "unknown option", err);
  if (!o->arg) {
    if (inline_val) return usage_error(ps, a, "this option takes no value", err);
    return o->key;
  }
  if (inline_val) {
    *value = inline_val;
    return o->key;
  }
  if (ps->i >= ps->argc) {
    char what[128];
    snprintf(what, sizeof what, "missing value %s", o->arg);
    return usage_error(ps, a, what, err);
  }
  *value = ps->argv[ps->i++];
  return o->key;
}

void av_cli_print_help(const char *usage, const char *description, const av_cli_opt_t *opts) {
  printf("usage: anvil %s\n\n%s\n", usage, description);
  if (!opts || !opts[0].name) return;
  printf("\noptions:\n");
  for (int k = 0; opts[k].name; k++) {
    char left[96];
    if (opts[k].key > 0 && opts[k].key < 256)
      snprintf(left, sizeof left, "-%c, --%s%s%s", opts[k].key, opts[k].name,
               opts[k].arg ? " " : "", opts[k].arg ? opts[k].arg : "");
    else
      snprintf(left, sizeof left, "    --%s%s%s", opts[k].name, opts[k].arg ? " " : "",
               opts[k].arg ? opts[k].arg : "");
    printf("  %-28s %s\n", left, opts[k].help);
  }
}

int av_cli_int_arg(const char *cmd, const char *opt, const char *text, int64_t min,
                     int64_t max, int64_t *out, anvil_error_t *err) {
  char *end;
  errno = 0;
  long long x = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || x < min || x > max)
    return av_cli_error(err, ANVIL_ERR_USAGE, cmd, opt,
                        "'%s' is not valid; expected an integer in [%lld, %lld]", text,
                        (long long)min, (long long)max);
  *out = x;
  return ANVIL_OK;
}

int av_cli_parse_heads(const char *cmd, const char *text, av_cli_heads_t *h, anvil_error_t *err) {
  char *end;
  errno = 0;
  long q = strtol(text, &end, 10);
  if (end == text || (*end != ',' && *end != '/') || errno == ERANGE)
    goto bad;
  const char *rest = end + 1;
  long kv = strtol(rest, &end, 10);
  if (end == rest || *end != '\0' || errno == ERANGE) goto bad;
  if (q < 1 || kv < 1 || q > 1024 || kv > 1024)
    return av_cli_error(err, ANVIL_ERR_RANGE, cmd, "--heads",
                        "'%s': head counts must be in [1, 1024]", text);
  if (q % kv != 0)
    return av_cli_error(err, ANVIL_ERR_RANGE, cmd, "--heads",
                        "%ld query heads are not a multiple of %ld KV heads", q, kv);
  h->hq = (int)q;
  h->hkv = (int)kv;
  return ANVIL_OK;
bad:
  return av_cli_error(err, ANVIL_ERR_USAGE, cmd, "--heads",
                      "'%s' is not valid; expected QUERY_HEADS,KV_HEADS such as 32,8", text);
}

/* Parses "1,4,16" into a JSON array of integers. */
int av_cli_add_assign(const char *cmd, int key, const char *value, av_cli_model_args_t *a,
                      anvil_error_t *err) {
  int *n = key == 'p' ? &a->n_sp : &a->n_cp;
  if (*n == AV_CLI_MAX_ASSIGN)
    return av_cli_error(err, ANVIL_ERR_USAGE, cmd, key == 'p' ? "-p" : "-c",
                        "at most %d parameters", AV_CLI_MAX_ASSIGN);
  (key == 'p' ? a->sp : a->cp)[(*n)++] = value;
  return ANVIL_OK;
}
