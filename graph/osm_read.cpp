/* osm_read.cpp - gp_osm_read: libosmium's reader behind the plain-C streaming API of osm_read.h.
 *
 * The only C++ in the graph module. libosmium (Debian libosmium2-dev, header-only) reads PBF with
 * protozero on a pool of decoder threads and XML with expat; this file walks the decoded buffers
 * and forwards each object to the C callbacks with its tags flattened into a reused array. Every
 * C++ exception stops at this boundary and becomes a gp_err.
 */
#include "graph/osm_read.h"

#include <osmium/io/any_input.hpp>
#include <osmium/osm/node.hpp>
#include <osmium/osm/relation.hpp>
#include <osmium/osm/way.hpp>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

const char *ends(const std::string &s, const char *suffix) {
    size_t l = std::strlen(suffix);
    return s.size() >= l && s.compare(s.size() - l, l, suffix) == 0 ? suffix : nullptr;
}

/* libosmium's format for path: from the name when it is a known one, else sniffed. */
std::string format_of(const char *path) {
    std::string p(path);
    if (ends(p, ".osm.pbf") || ends(p, ".pbf")) return "pbf";
    if (ends(p, ".osm")) return "osm";
    if (ends(p, ".osm.gz")) return "osm.gz";
    if (ends(p, ".osm.bz2")) return "osm.bz2";
    FILE *f = std::fopen(path, "rb");
    int c = f ? std::fgetc(f) : EOF;
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t') c = std::fgetc(f);
    if (f) std::fclose(f);
    return c == '<' ? "osm" : "pbf";
}

struct tagbuf {
    std::vector<gp_osm_tag> tags;
    void fill(const osmium::TagList &tl) {
        tags.clear();
        for (const osmium::Tag &t : tl) tags.push_back(gp_osm_tag{t.key(), t.value()});
    }
};

} // namespace

extern "C" int gp_osm_read(const char *path, const gp_osm_callbacks *cb, gp_err *err) {
    FILE *probe = std::fopen(path, "rb");
    if (!probe) return gp_err_set(err, GP_EIO, "%s: cannot open: %s", path, std::strerror(errno));
    std::fclose(probe);
    try {
        osmium::osm_entity_bits::type bits = osmium::osm_entity_bits::nothing;
        if (cb->node) bits |= osmium::osm_entity_bits::node;
        if (cb->way) bits |= osmium::osm_entity_bits::way;
        if (cb->relation) bits |= osmium::osm_entity_bits::relation;
        osmium::io::File file(path, format_of(path));
        osmium::io::Reader reader(file, bits, osmium::io::read_meta::no);
        tagbuf tb;
        std::vector<int64_t> refs;
        std::vector<gp_osm_member> members;
        int rc = GP_OK;
        uint64_t decoded = 0;
        while (rc == GP_OK) {
            osmium::memory::Buffer buffer = reader.read();
            if (!buffer) break;
            decoded += buffer.committed();
            if (cb->decoded && (rc = cb->decoded(cb->ctx, decoded, err)) != GP_OK) break;
            const auto end = buffer.end<osmium::OSMObject>();
            for (auto it = buffer.begin<osmium::OSMObject>(); rc == GP_OK && it != end; ++it) {
                switch (it->type()) {
                case osmium::item_type::node: {
                    if (!cb->node) break;
                    const auto &n = static_cast<const osmium::Node &>(*it);
                    const osmium::Location loc = n.location();
                    if (!loc.valid()) break; /* deleted or broken: no position, not routable */
                    tb.fill(n.tags());
                    rc = cb->node(cb->ctx, n.id(), loc.lon(), loc.lat(), tb.tags.data(),
                                  (uint32_t)tb.tags.size(), err);
                    break;
                }
                case osmium::item_type::way: {
                    if (!cb->way) break;
                    const auto &w = static_cast<const osmium::Way &>(*it);
                    refs.clear();
                    for (const osmium::NodeRef &r : w.nodes()) refs.push_back(r.ref());
                    tb.fill(w.tags());
                    rc = cb->way(cb->ctx, w.id(), refs.data(), (uint32_t)refs.size(),
                                 tb.tags.data(), (uint32_t)tb.tags.size(), err);
                    break;
                }
                case osmium::item_type::relation: {
                    if (!cb->relation) break;
                    const auto &r = static_cast<const osmium::Relation &>(*it);
                    members.clear();
                    for (const osmium::RelationMember &m : r.members()) {
                        char t = m.type() == osmium::item_type::node  ? 'n'
                                 : m.type() == osmium::item_type::way ? 'w'
                                                                      : 'r';
                        members.push_back(gp_osm_member{t, m.ref(), m.role()});
                    }
                    tb.fill(r.tags());
                    rc = cb->relation(cb->ctx, r.id(), members.data(), (uint32_t)members.size(),
                                      tb.tags.data(), (uint32_t)tb.tags.size(), err);
                    break;
                }
                default: break;
                }
            }
        }
        reader.close();
        return rc;
    } catch (const std::bad_alloc &) {
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory reading OSM data", path);
    } catch (const std::exception &e) {
        return gp_err_set(err, GP_EPARSE, "%s: not a readable OSM file: %s", path, e.what());
    }
}
