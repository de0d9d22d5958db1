/* load_graphml.c - GraphML router topologies as published by the Internet Topology Zoo, read with
 * libxml2.
 *
 * Nodes: the <node id="N"> attribute is the external id (must be an integer); the node data keyed
 * "label" becomes the name, "Longitude"/"Latitude" the coordinates (only when both are present and
 * numeric). Edges: <edge source target>; undirected graphs (edgedefault="undirected", the Zoo's only
 * kind) give two arcs per link, an edge's own directed="true|false" attribute overrides the default.
 * Link speed for the bandwidth cost rule (graph/topo.h): "LinkSpeedRaw" (bit/s) when present and
 * positive, else "LinkSpeed" times the "LinkSpeedUnits" multiplier (K, M, G, T; no unit: M), else
 * unknown. Errors carry the file's line number (xmlGetLineNo, or the parser's line for bad XML) and
 * say what is wrong without quoting the document. The file is read whole under the load's guards
 * (gp_read_all: allow-list, size, deadline) and parsed from memory with the network off; a
 * document with a DTD is refused, so no entity is ever expanded or fetched.
 */
#include "graph/graph_internal.h"
#include "graph/topo.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { K_OTHER = 0, K_LABEL, K_LON, K_LAT, K_SPEED, K_SPEED_RAW, K_SPEED_UNITS };

typedef struct key_map {
    char **ids;
    int *kind;
    size_t n, cap;
} key_map;

static int is_elem(const xmlNode *x, const char *name) {
    return x->type == XML_ELEMENT_NODE && strcmp((const char *)x->name, name) == 0;
}

static int key_kind(const key_map *km, const char *id) {
    for (size_t i = 0; i < km->n; i++)
        if (strcmp(km->ids[i], id) == 0) return km->kind[i];
    return K_OTHER;
}

static void key_map_free(key_map *km) {
    if (!km) return;
    for (size_t i = 0; i < km->n; i++) free(km->ids[i]);
    free(km->ids);
    free(km->kind);
}

static int key_map_add(key_map *km, const char *id, int kind) {
    if (km->n == km->cap) {
        size_t cap = km->cap ? km->cap * 2 : 32;
        char **ids = realloc(km->ids, cap * sizeof *ids);
        if (!ids) return GP_ENOMEM;
        km->ids = ids;
        int *k = realloc(km->kind, cap * sizeof *k);
        if (!k) return GP_ENOMEM;
        km->kind = k;
        km->cap = cap;
    }
    km->ids[km->n] = strdup(id);
    if (!km->ids[km->n]) return GP_ENOMEM;
    km->kind[km->n++] = kind;
    return GP_OK;
}

/* Attribute value (malloc'd by libxml2, xmlFree) or NULL. */
static char *attr(const xmlNode *x, const char *name) {
    return (char *)xmlGetProp((xmlNode *)x, (const xmlChar *)name);
}

static int parse_i64(const char *s, int64_t *out) {
    char *end;
    if (!s || !*s) return 0;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    if (*end) return 0;
    *out = v;
    return 1;
}

static int parse_num(const char *s, double *out) {
    char *end;
    if (!s) return 0;
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (*end || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static double unit_mult(const char *u) {
    if (!u || !*u) return 1e6;
    if (strcasecmp(u, "K") == 0) return 1e3;
    if (strcasecmp(u, "M") == 0) return 1e6;
    if (strcasecmp(u, "G") == 0) return 1e9;
    if (strcasecmp(u, "T") == 0) return 1e12;
    return -1;
}

/* What a libxml2 parser error code means, without the document's text; NULL when not listed. */
static const char *xml_error_text(int code) {
    switch (code) {
    case XML_ERR_DOCUMENT_EMPTY: return "no root element (not an XML document)";
    case XML_ERR_DOCUMENT_END: return "content after the root element";
    case XML_ERR_INVALID_CHAR: return "a character not allowed in XML";
    case XML_ERR_ENTITYREF_SEMICOL_MISSING: return "an entity reference without ';'";
    case XML_ERR_UNDECLARED_ENTITY: return "an undeclared entity";
    case XML_ERR_UNSUPPORTED_ENCODING: return "an unsupported encoding";
    case XML_ERR_INVALID_ENCODING: return "bytes invalid in the document's encoding";
    case XML_ERR_NS_DECL_ERROR: return "a bad namespace declaration";
    case XML_ERR_LT_IN_ATTRIBUTE: return "'<' in an attribute value";
    case XML_ERR_ATTRIBUTE_NOT_STARTED: return "an attribute value without quotes";
    case XML_ERR_ATTRIBUTE_WITHOUT_VALUE: return "an attribute without a value";
    case XML_ERR_ATTRIBUTE_REDEFINED: return "an attribute given twice in one element";
    case XML_ERR_COMMENT_NOT_FINISHED: return "an unterminated comment";
    case XML_ERR_CDATA_NOT_FINISHED: return "an unterminated CDATA section";
    case XML_ERR_NAME_REQUIRED: return "a missing element or attribute name";
    case XML_ERR_GT_REQUIRED: return "an element start tag not closed with '>'";
    case XML_ERR_LTSLASH_REQUIRED: return "a missing end tag";
    case XML_ERR_EQUAL_REQUIRED: return "an attribute without '='";
    case XML_ERR_TAG_NAME_MISMATCH: return "an end tag that does not match its start tag";
    case XML_ERR_TAG_NOT_FINISHED: return "the document ends inside an element";
    default: return NULL;
    }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

gp_graph *gp_load_graphml(const char *path, const gp_load_opts *o, gp_err *err) {
    gp_graph *g = NULL;
    gp_builder *b = NULL;
    xmlParserCtxtPtr ctx = NULL;
    xmlDocPtr doc = NULL;
    key_map km = {0};
    gp_topo_link *links = NULL;
    size_t nl = 0, capl = 0;
    int rule;
    char *s = NULL, *t = NULL;
    int64_t *ids = NULL;

    if (gp_topo_rule(o, GP_RULE_HOPS, NULL, "graphml", &rule, err) != GP_OK) return NULL;
    char *text = NULL;
    size_t tlen = 0;
    if (gp_read_all(path, o, &text, &tlen, err)) return NULL;
    if (tlen > INT_MAX) {
        free(text);
        gp_err_set(err, GP_ETOOBIG, "%s: over 2 GiB of XML", path);
        return NULL;
    }
    ctx = xmlNewParserCtxt();
    if (!ctx) {
        free(text);
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    doc = xmlCtxtReadMemory(ctx, text, (int)tlen, NULL, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    free(text);
    if (!doc) {
        const xmlError *xe = xmlCtxtGetLastError(ctx);
        /* libxml2's own messages quote tags, attributes and entities of the document: say what
         * is wrong from the error code instead */
        const char *msg = xml_error_text(xe ? xe->code : -1);
        char other[64];
        if (!msg) {
            snprintf(other, sizeof other, "malformed XML (libxml2 error %d)", xe ? xe->code : -1);
            msg = other;
        }
        gp_err_set(err, GP_EPARSE, "%s:%d: bad XML: %s", path, xe ? xe->line : 0, msg);
        goto done;
    }
    if (doc->intSubset || doc->extSubset) {
        gp_err_set(err, GP_EPARSE, "%s: a document type declaration (DTD) is not accepted", path);
        goto done;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !is_elem(root, "graphml")) {
        gp_err_set(err, GP_EPARSE, "%s:%ld: root element is not <graphml>", path,
                   root ? xmlGetLineNo(root) : 1L);
        goto done;
    }
    xmlNode *graph = NULL;
    for (xmlNode *x = root->children; x; x = x->next) {
        if (is_elem(x, "key")) {
            char *id = attr(x, "id"), *name = attr(x, "attr.name");
            int kind = K_OTHER;
            if (name) {
                if (strcmp(name, "label") == 0) kind = K_LABEL;
                else if (strcmp(name, "Longitude") == 0) kind = K_LON;
                else if (strcmp(name, "Latitude") == 0) kind = K_LAT;
                else if (strcmp(name, "LinkSpeed") == 0) kind = K_SPEED;
                else if (strcmp(name, "LinkSpeedRaw") == 0) kind = K_SPEED_RAW;
                else if (strcmp(name, "LinkSpeedUnits") == 0) kind = K_SPEED_UNITS;
            }
            int rc = id ? key_map_add(&km, id, kind) : GP_OK;
            long line = xmlGetLineNo(x);
            xmlFree(id);
            xmlFree(name);
            if (rc != GP_OK) {
                gp_err_set(err, rc, "%s:%ld: out of memory", path, line);
                goto done;
            }
        } else if (is_elem(x, "graph") && !graph) {
            graph = x;
        }
    }
    if (!graph) {
        gp_err_set(err, GP_EPARSE, "%s:%ld: no <graph> element", path, xmlGetLineNo(root));
        goto done;
    }
    int undirected = 1;
    s = attr(graph, "edgedefault");
    if (s && strcmp(s, "directed") == 0) undirected = 0;
    xmlFree(s);
    s = NULL;

    b = gp_builder_new(o && o->scale > 0 ? o->scale : GP_SCALE_INTEGER);
    if (!b) {
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    gp_builder_guard(b, o);
    /* Nodes first (the Zoo lists them before edges, but GraphML does not require it). */
    unsigned long steps = 0; /* deadline checks every 1024 elements */
    for (xmlNode *x = graph->children; x; x = x->next) {
        if (!is_elem(x, "node")) continue;
        long line = xmlGetLineNo(x);
        int64_t id;
        if ((++steps & 1023) == 0 && gp_load_check_time(o, err)) goto done;
        s = attr(x, "id");
        if (!parse_i64(s, &id)) {
            gp_err_set(err, GP_EPARSE, "%s:%ld: node id %s", path, line,
                       s ? "is not an integer" : "is missing");
            goto done;
        }
        xmlFree(s);
        s = NULL;
        double lon = 0, lat = 0;
        int has_lon = 0, has_lat = 0;
        char *label = NULL;
        for (xmlNode *d = x->children; d; d = d->next) {
            if (!is_elem(d, "data")) continue;
            char *k = attr(d, "key");
            int kind = k ? key_kind(&km, k) : K_OTHER;
            xmlFree(k);
            if (kind == K_OTHER) continue;
            char *v = (char *)xmlNodeGetContent(d);
            if (kind == K_LABEL && !label) label = v, v = NULL;
            else if (kind == K_LON) has_lon = parse_num(v, &lon);
            else if (kind == K_LAT) has_lat = parse_num(v, &lat);
            xmlFree(v);
        }
        int has = has_lon && has_lat && lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90;
        gp_err e;
        int rc = gp_builder_add_node(b, id, has, lon, lat, label, &e);
        xmlFree(label);
        if (rc != GP_OK) {
            gp_err_set(err, rc, "%s:%ld: %s", path, line, e.msg);
            goto done;
        }
    }
    uint32_t nodes = gp_builder_nodes(b);
    for (xmlNode *x = graph->children; x; x = x->next) {
        if (!is_elem(x, "edge")) continue;
        long line = xmlGetLineNo(x);
        if ((++steps & 1023) == 0 && gp_load_check_time(o, err)) goto done;
        int64_t u, v;
        s = attr(x, "source");
        t = attr(x, "target");
        if (!parse_i64(s, &u) || !parse_i64(t, &v)) {
            gp_err_set(err, GP_EPARSE, "%s:%ld: edge source/target must be integer node ids", path,
                       line);
            goto done;
        }
        xmlFree(s);
        xmlFree(t);
        s = t = NULL;
        int both = undirected;
        s = attr(x, "directed");
        if (s) both = strcmp(s, "true") != 0;
        xmlFree(s);
        s = NULL;
        double raw = -1, sp = -1, mult = 1e6;
        int has_sp = 0;
        for (xmlNode *d = x->children; d; d = d->next) {
            if (!is_elem(d, "data")) continue;
            char *k = attr(d, "key");
            int kind = k ? key_kind(&km, k) : K_OTHER;
            xmlFree(k);
            if (kind == K_OTHER) continue;
            char *val = (char *)xmlNodeGetContent(d);
            double num;
            if (kind == K_SPEED_RAW && parse_num(val, &num)) raw = num;
            else if (kind == K_SPEED && parse_num(val, &num)) sp = num, has_sp = 1;
            else if (kind == K_SPEED_UNITS) mult = unit_mult(val);
            xmlFree(val);
        }
        if (nl == capl) {
            size_t cap = capl ? capl * 2 : 256;
            gp_topo_link *nlinks = realloc(links, cap * sizeof *nlinks);
            if (!nlinks) {
                gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
                goto done;
            }
            links = nlinks;
            capl = cap;
        }
        gp_topo_link *L = &links[nl++];
        L->u = u;
        L->v = v;
        L->both = both;
        L->line = line;
        L->cost = 1;
        L->bw = raw > 0 ? raw : (has_sp && sp > 0 && mult > 0 ? sp * mult : -1);
    }
    /* Endpoints must be declared nodes: a typo in an id should not invent a router. */
    if (nodes == 0) {
        gp_err_set(err, GP_EPARSE, "%s:%ld: the graph has no <node>", path, xmlGetLineNo(graph));
        goto done;
    }
    size_t nelem = 0;
    for (xmlNode *x = graph->children; x; x = x->next) nelem += is_elem(x, "node");
    if (!(ids = malloc(nelem * sizeof *ids))) {
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    size_t ni = 0;
    for (xmlNode *x = graph->children; x && ni < nelem; x = x->next) {
        if (!is_elem(x, "node")) continue;
        s = attr(x, "id");
        if (parse_i64(s, &ids[ni])) ni++;
        xmlFree(s);
        s = NULL;
    }
    qsort(ids, ni, sizeof *ids, cmp_i64);
    for (size_t i = 1; i < ni; i++) {
        if (ids[i] != ids[i - 1]) continue;
        long line = 0; /* the line of the second <node> with this id */
        int seen = 0;
        for (xmlNode *x = graph->children; x && !line; x = x->next) {
            int64_t id;
            if (!is_elem(x, "node")) continue;
            s = attr(x, "id");
            if (parse_i64(s, &id) && id == ids[i] && seen++) line = xmlGetLineNo(x);
            xmlFree(s);
            s = NULL;
        }
        gp_err_set(err, GP_EPARSE, "%s:%ld: node id %lld declared twice", path, line,
                   (long long)ids[i]);
        goto done;
    }
    for (size_t i = 0; i < nl; i++) {
        int64_t e[2] = {links[i].u, links[i].v};
        for (int k = 0; k < 2; k++)
            if (!bsearch(&e[k], ids, ni, sizeof *ids, cmp_i64)) {
                gp_err_set(err, GP_EPARSE, "%s:%ld: edge names node %lld, which has no <node>",
                           path, links[i].line, (long long)e[k]);
                goto done;
            }
    }
    gp_topo_costs(links, nl, rule, gp_topo_ref_bw(o));
    if (gp_topo_add_links(b, links, nl, path, err) != GP_OK) goto done;
    g = gp_builder_finish(b, path, "graphml", !undirected, err);
    if (g) gp_graph_set_unit(g, rule == GP_RULE_HOPS ? "hops" : "cost", 0);
    if (g && gp_topo_set_caps(g, links, nl, err) != GP_OK) {
        gp_graph_unref(g);
        g = NULL;
    }
    b = NULL;
done:
    xmlFree(s);
    xmlFree(t);
    gp_builder_free(b);
    free(links);
    free(ids);
    key_map_free(&km);
    if (doc) xmlFreeDoc(doc);
    if (ctx) xmlFreeParserCtxt(ctx);
    return g;
}
