/* util.h - pure helpers of the HTTP layer (server/http/util.c): percent-decoding that
 * reports NUL bytes, UTF-8 repair for JSON strings, log-field escaping and query redaction,
 * request-id checking and generation, Accept-Encoding and CORS origin matching, and gzip. No
 * libmicrohttpd here: the daemon (server/http/daemon.c), the in-process dispatcher and the unit tests
 * (tests/test_http_util.c) share them.
 */
#ifndef GP_HTTP_UTIL_H
#define GP_HTTP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decodes %HH escapes of s[0..len) in place (and '+' as a space when plus_is_space) and
 * NUL-terminates; a malformed escape stays as it is. Returns the decoded length; *saw_nul is set
 * to 1 (never reset) when a %00 decoded to a NUL byte. */
size_t gp_url_decode(char *s, size_t len, int plus_is_space, int *saw_nul);

/* Copies s into out (size > 0), replacing every byte that does not start a valid UTF-8 sequence
 * (overlong forms, surrogates and code points past U+10FFFF included) with U+FFFD, truncating at
 * a character boundary to fit. Returns 1 when something was replaced. */
int gp_utf8_repair(const char *s, char *out, size_t size);

/* Copies s into out for a key=value log field: bytes that would break the line's parsing (space,
 * control, quote, backslash, %, non-ASCII) become %XX. Truncated to fit. */
void gp_log_escape(const char *s, size_t len, char *out, size_t size);

/* 1 when a query parameter of that name carries a secret whose value must not reach the logs
 * (token, password, secret, key, auth, signature, ... anywhere in the name, case-insensitive). */
int gp_query_key_secret(const char *key);

/* 1 when id is a usable request id: 1-64 characters of [A-Za-z0-9._:-]. */
int gp_request_id_ok(const char *id);
/* Writes a fresh random request id (16 hex digits) into out (size >= 17). */
void gp_request_id_new(char *out, size_t size);

/* 1 when an Accept-Encoding value accepts gzip (a "gzip" or "*" token whose q is not 0). */
int gp_accepts_gzip(const char *accept_encoding);

/* Matches an Origin against cors_origins: 0 = not allowed (or CORS off: empty list),
 * 1 = allowed by "*", 2 = allowed by name (answer with the origin itself and Vary: Origin). The
 * list is comma separated; entries compare exactly (scheme://host[:port]), case-insensitive. */
int gp_cors_match(const char *cors_origins, const char *origin);

/* The client address of sa (IPv4: dotted quad written digit by digit, inet_ntop's sprintf was a
 * percent of a short request; IPv6: inet_ntop) into out; "" for another family. */
void gp_addr_str(const struct sockaddr *sa, char *out, size_t size);

/* gzip (RFC 1952) of in[0..n): malloc'd, *out_len bytes; NULL on allocation failure. */
char *gp_gzip(const char *in, size_t n, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif
