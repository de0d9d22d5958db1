/* json.h - compact printing of a cJSON tree for the answers (server/http/json.c): the very bytes
 * cJSON_PrintUnformatted writes (cJSON 1.7.15 as Debian 12 builds it: the same escapes, numbers
 * as "%1.15g", or "%1.17g" where that does not read back, -0 as "-0"), faster: the common numbers
 * (a decimal of up to 6 places, magnitude under 10^9, what gp_round_unit gives) are written digit
 * by digit without printf and sscanf, and the text grows in one buffer. tests/test_http_json.c
 * compares it with cJSON's on generated trees.
 */
#ifndef GP_HTTP_JSON_H
#define GP_HTTP_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The text of item, malloc'd with one byte to spare past its NUL; *len (may be NULL) receives its
 * length. NULL when out of memory or where cJSON_PrintUnformatted would fail too (a raw item
 * without text, an item of no known type). */
char *gp_json_print(const cJSON *item, size_t *len);

/* gp_json_print's text of item appended to the buffer *buf (*len bytes used of *cap, both
 * updated; *buf may move, realloc'd; NULL / 0 / 0 starts one), with room left for two more
 * bytes: 0; -1 where cJSON would not print item, -2 when out of memory, nothing appended then
 * (*buf still valid). No NUL is written. */
int gp_json_append(const cJSON *item, char **buf, size_t *len, size_t *cap);

/* A JSON text written straight, without a tree: the answers' big parts (a map match's legs and
 * tracepoints) write the bytes gp_json_print would print for the tree they stand for. p holds len
 * bytes of cap (realloc'd as it grows; {0} starts one; free(p) ends it), always with room for two
 * more. bad: something cJSON would not print (a missing tree), or out of memory (oom too); the
 * writers then write nothing more. */
typedef struct gp_json_out {
    char *p;
    size_t len, cap;
    int bad, oom;
} gp_json_out;
/* n bytes of text as they are; gp_json_lit: a string literal's. */
void gp_json_put_raw(gp_json_out *o, const char *s, size_t n);
#define gp_json_put_lit(o, s) gp_json_put_raw((o), "" s, sizeof(s) - 1) /* s: a literal only */
/* A number as gp_json_print prints a cJSON number of value d. */
void gp_json_put_num(gp_json_out *o, double d);
/* A string (NULL: "") quoted and escaped as cJSON prints it. */
void gp_json_put_str(gp_json_out *o, const char *s);
/* The text of a tree (gp_json_print's); NULL is bad. */
void gp_json_put_tree(gp_json_out *o, const cJSON *item);
/* Room for n more bytes (a first size for a text about to be written): 1, or 0 when bad. */
int gp_json_out_reserve(gp_json_out *o, size_t n);

/* cJSON_Add{Number,String,Array}ToObject for a key of static storage (a string literal): the
 * member points to the key instead of a copy of it (cJSON_AddItemToObjectCS), one allocation and
 * one free less per member of the answers' big trees; the same text printed. NULL when out of
 * memory. */
cJSON *gp_json_add_number(cJSON *object, const char *key, double number);
cJSON *gp_json_add_string(cJSON *object, const char *key, const char *string);
cJSON *gp_json_add_array(cJSON *object, const char *key);

/* Reading a JSON text straight, for the common forms of big bodies read without cJSON (a caller
 * leaves anything else to cJSON): p the next byte, e the end. */
typedef struct gp_json_scan {
    const char *p, *e;
} gp_json_scan;
/* Skips JSON whitespace (space, tab, newline, carriage return). */
void gp_json_scan_ws(gp_json_scan *s);
/* Skips whitespace, then takes c when it comes next: 1, else 0. */
int gp_json_scan_char(gp_json_scan *s, char c);
/* Skips whitespace, then takes a number of JSON's grammar into *v: the double cJSON reads for it
 * (strtod of its text); 0 (nothing taken) when no such number comes next or it is longer than the
 * 63 characters cJSON reads. */
int gp_json_scan_num(gp_json_scan *s, double *v);

#ifdef __cplusplus
}
#endif
#endif
