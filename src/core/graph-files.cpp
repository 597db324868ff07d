// Graph files: a Graphviz dump of a graph (lm_ggml_graph_dump_dot), and the
// export / import entry points, which ggml declares but never implemented.
//
// The dot file is laid out as ggml writes it: one record per node (name,
// type, index, shape, op symbol; a <g> field with the gradient's op when the
// graph carries gradients), one pink record per leaf, then one edge per
// source ("src j"). A gradient node is not drawn; edges to or from it attach
// to the <g> field of the node it is the gradient of.

#include "ggml-impl.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <unordered_map>
#include <unordered_set>

namespace {

lm_ggml_tensor * grad_of(const lm_ggml_cgraph * g, const lm_ggml_tensor * node) {
    return lm_ggml_graph_get_grad(g, node); // NULL when the graph carries no gradients
}

// Writes s into a record label: the record syntax characters and quotes get
// a backslash (kept as is when one is already there, as in "x-\>y").
void put_record_text(FILE * fp, const char * s) {
    char prev = '\0';
    for (const char * p = s; *p != '\0'; prev = *p, p++) {
        const bool special = std::strchr("\"{}|<>", *p) != nullptr;
        if (special && prev != '\\') {
            std::fputc('\\', fp);
        }
        std::fputc(*p, fp);
    }
}

void put_name_and_type(FILE * fp, const lm_ggml_tensor * t) {
    if (t->name[0] != '\0') {
        put_record_text(fp, t->name);
        std::fprintf(fp, " (%s)|", lm_ggml_type_name(t->type));
    } else {
        std::fprintf(fp, "(%s)|", lm_ggml_type_name(t->type));
    }
}

struct dot_writer {
    FILE * fp;
    const lm_ggml_cgraph * gb;
    std::unordered_map<const lm_ggml_tensor *, lm_ggml_tensor *> parent; // gradient -> first node it belongs to
    std::unordered_set<const lm_ggml_tensor *> forward;                  // nodes of gf
    bool have_gf;

    lm_ggml_tensor * parent_of(const lm_ggml_tensor * t) const {
        auto it = parent.find(t);
        return it == parent.end() ? nullptr : it->second;
    }

    void node_record(int i, lm_ggml_tensor * node) {
        const lm_ggml_tensor * grad = grad_of(gb, node);
        const char * color = "white";
        if (node->flags & LM_GGML_TENSOR_FLAG_PARAM) {
            color = "yellow";
        } else if (grad != nullptr) {
            color = (!have_gf || forward.count(node)) ? "green" : "lightblue";
        }
        std::fprintf(fp, "  \"%p\" [ style = filled; fillcolor = %s; shape = record; label=\"", (void *) node, color);
        put_name_and_type(fp, node);
        if (lm_ggml_is_matrix(node)) {
            std::fprintf(fp, "%d [%" PRId64 ", %" PRId64 "] | <x>", i, node->ne[0], node->ne[1]);
        } else {
            std::fprintf(fp, "%d [%" PRId64 ", %" PRId64 ", %" PRId64 "] | <x>", i, node->ne[0], node->ne[1],
                         node->ne[2]);
        }
        put_record_text(fp, lm_ggml_op_symbol(node->op));
        if (grad != nullptr) {
            std::fputs(" | <g>", fp);
            put_record_text(fp, lm_ggml_op_symbol(grad->op));
        }
        std::fputs("\"; ]\n", fp);
    }

    void leaf_record(int i, lm_ggml_tensor * leaf) {
        std::fprintf(fp, "  \"%p\" [ style = filled; fillcolor = pink; shape = record; label=\"<x>", (void *) leaf);
        put_name_and_type(fp, leaf);
        std::fprintf(fp, "CONST %d [%" PRId64 ", %" PRId64 "]", i, leaf->ne[0], leaf->ne[1]);
        const int64_t n = lm_ggml_nelements(leaf);
        if (n < 5 && leaf->data != nullptr) {
            // values are not read: the data may live in any backend's memory
            std::fputs(" | (", fp);
            for (int64_t j = 0; j < n; j++) {
                std::fputs(j + 1 < n ? "#, " : "#", fp);
            }
            std::fputs(")", fp);
        }
        std::fputs("\"; ]\n", fp);
    }

    void node_edge(lm_ggml_tensor * node, lm_ggml_tensor * src, int j) {
        lm_ggml_tensor * gp = parent_of(node);
        lm_ggml_tensor * gp0 = parent_of(src);
        std::fprintf(fp, "  \"%p\":%s -> \"%p\":%s [ arrowhead = %s; style = %s; label = \"src %d\"; ]\n",
                     gp0 ? (void *) gp0 : (void *) src, gp0 ? "g" : "x", gp ? (void *) gp : (void *) node,
                     gp ? "g" : "x", gp ? "empty" : "vee", gp ? "dashed" : "solid", j);
    }

    void leaf_edge(lm_ggml_tensor * leaf, lm_ggml_tensor * src, int j) {
        std::fprintf(fp, "  \"%p\":x -> \"%p\":x [ label = \"src %d\"; ]\n", (void *) src, (void *) leaf, j);
    }
};

} // namespace

extern "C" void lm_ggml_graph_dump_dot(const struct lm_ggml_cgraph * gb, const struct lm_ggml_cgraph * gf,
                                       const char * filename) {
    if (gb == nullptr || filename == nullptr) {
        lm_ggml_null_arg("lm_ggml_graph_dump_dot");
        return;
    }
    FILE * fp = lm_ggml_fopen(filename, "w");
    if (fp == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_dump_dot: cannot open '%s' for writing: %s\n", filename, std::strerror(errno));
        return;
    }
    bool ok = true;
    try {
        dot_writer w{fp, gb, {}, {}, gf != nullptr};
        for (int i = 0; i < gb->n_nodes; i++) {
            if (lm_ggml_tensor * g = grad_of(gb, gb->nodes[i])) {
                w.parent.emplace(g, gb->nodes[i]); // the first node wins, as ggml's search
            }
        }
        for (int i = 0; gf != nullptr && i < gf->n_nodes; i++) {
            w.forward.insert(gf->nodes[i]);
        }

        std::fputs("digraph G {\n  newrank = true;\n  rankdir = TB;\n", fp);
        for (int i = 0; i < gb->n_nodes; i++) {
            if (w.parent_of(gb->nodes[i]) == nullptr) { // gradients are drawn inside their node
                w.node_record(i, gb->nodes[i]);
            }
        }
        for (int i = 0; i < gb->n_leafs; i++) {
            w.leaf_record(i, gb->leafs[i]);
        }
        for (int i = 0; i < gb->n_nodes; i++) {
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                if (gb->nodes[i]->src[j] != nullptr) {
                    w.node_edge(gb->nodes[i], gb->nodes[i]->src[j], j);
                }
            }
        }
        for (int i = 0; i < gb->n_leafs; i++) {
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                if (gb->leafs[i]->src[j] != nullptr) {
                    w.leaf_edge(gb->leafs[i], gb->leafs[i]->src[j], j);
                }
            }
        }
        std::fputs("}\n", fp);
    } catch (const std::bad_alloc &) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_dump_dot: out of memory\n");
        ok = false;
    }
    ok = !std::ferror(fp) && ok;
    ok = std::fclose(fp) == 0 && ok;
    if (!ok) {
        LM_GGML_LOG_ERROR("lm_ggml_graph_dump_dot: writing '%s' failed\n", filename);
        std::remove(filename); // never leave half a graph behind
        return;
    }
    LM_GGML_LOG_INFO("lm_ggml_graph_dump_dot: dot -Tpng %s -o %s.png && open %s.png\n", filename, filename, filename);
}

// ggml of this version declares these two but has no graph file format: a
// program calling them fails to link there. Here they fail at run time, loudly.
extern "C" void lm_ggml_graph_export(const struct lm_ggml_cgraph * cgraph, const char * fname) {
    (void) cgraph;
    LM_GGML_LOG_ERROR("lm_ggml_graph_export: graph files are not supported (ggml has no format for them); "
                      "'%s' not written\n",
                      fname ? fname : "(null)");
}

extern "C" struct lm_ggml_cgraph * lm_ggml_graph_import(const char * fname, struct lm_ggml_context ** ctx_data,
                                                        struct lm_ggml_context ** ctx_eval) {
    if (ctx_data != nullptr) {
        *ctx_data = nullptr;
    }
    if (ctx_eval != nullptr) {
        *ctx_eval = nullptr;
    }
    LM_GGML_LOG_ERROR("lm_ggml_graph_import: graph files are not supported (ggml has no format for them); "
                      "'%s' not read\n",
                      fname ? fname : "(null)");
    return nullptr;
}
