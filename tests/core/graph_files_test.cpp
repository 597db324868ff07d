// lm_ggml_graph_dump_dot writes the Graphviz file ggml writes (records for
// nodes and leafs, one edge per source, gradients folded into their node),
// checked line by line against strings built here from that format; when
// Graphviz's `dot` is installed it must also accept the file.
// lm_ggml_graph_export / lm_ggml_graph_import fail with one error.

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "ggml-impl.h"
#include "ggml.h"

namespace {

struct LogCapture {
    static inline std::vector<std::pair<lm_ggml_log_level, std::string>> lines;
    static void cb(enum lm_ggml_log_level level, const char * text, void *) { lines.emplace_back(level, text); }
    LogCapture() {
        lines.clear();
        lm_ggml_log_set(cb, nullptr);
    }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    static size_t errors() {
        size_t n = 0;
        for (auto & l : lines) n += l.first == LM_GGML_LOG_LEVEL_ERROR;
        return n;
    }
};

std::string fmt(const char * f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char * f, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof(buf), f, ap);
    va_end(ap);
    return buf;
}

std::string temp_file(const char * stem) {
    return (std::filesystem::temp_directory_path() / (std::string(stem) + "-" + std::to_string(getpid()) + ".dot"))
        .string();
}

std::vector<std::string> read_lines(const std::string & path) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

// ggml's record for a node without gradient: name part, index, shape, op symbol
std::string node_line(const lm_ggml_tensor * t, int i, const char * color, const char * name_part,
                      const char * grad_sym = nullptr) {
    std::string s =
        fmt("  \"%p\" [ style = filled; fillcolor = %s; shape = record; label=\"%s", (void *) t, color, name_part);
    if (t->ne[2] == 1 && t->ne[3] == 1) {
        s += fmt("%d [%" PRId64 ", %" PRId64 "] | <x>%s", i, t->ne[0], t->ne[1], lm_ggml_op_symbol(t->op));
    } else {
        s += fmt("%d [%" PRId64 ", %" PRId64 ", %" PRId64 "] | <x>%s", i, t->ne[0], t->ne[1], t->ne[2],
                 lm_ggml_op_symbol(t->op));
    }
    if (grad_sym) s += fmt(" | <g>%s", grad_sym);
    return s + "\"; ]";
}

std::string edge_line(const void * from, const char * fport, const void * to, const char * tport, bool grad, int j) {
    return fmt("  \"%p\":%s -> \"%p\":%s [ arrowhead = %s; style = %s; label = \"src %d\"; ]", from, fport, to, tport,
               grad ? "empty" : "vee", grad ? "dashed" : "solid", j);
}

bool have_dot() { return std::system("command -v dot > /dev/null 2>&1") == 0; }

} // namespace

TEST(GraphDot, NodesLeafsAndEdgesAsGgmlWritesThem) {
    lm_ggml_init_params ip = {1 << 20, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 3);
    lm_ggml_set_name(a, "a");
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 3); // unnamed
    lm_ggml_tensor * s = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 2);    // small: its values are listed as '#'
    lm_ggml_set_name(s, "s");
    lm_ggml_tensor * c = lm_ggml_add(ctx, a, b);
    lm_ggml_set_name(c, "sum|<x>"); // record syntax in a name gets escaped
    lm_ggml_tensor * d = lm_ggml_mul(ctx, c, a);
    lm_ggml_set_name(d, "d");
    lm_ggml_tensor * r = lm_ggml_reshape_3d(ctx, d, 2, 2, 3); // not a matrix: three dims shown
    lm_ggml_set_name(r, "r");
    lm_ggml_tensor * e = lm_ggml_mul(ctx, s, lm_ggml_sum(ctx, r));
    lm_ggml_set_name(e, "e");
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, e);
    ASSERT_EQ(lm_ggml_graph_n_nodes(gf), 5); // add, mul, reshape, sum, mul

    const std::string path = temp_file("lmggml-dot");
    LogCapture log;
    lm_ggml_graph_dump_dot(gf, nullptr, path.c_str());
    EXPECT_EQ(LogCapture::errors(), 0u);
    ASSERT_EQ(LogCapture::lines.size(), 1u); // the hint how to render it
    EXPECT_EQ(LogCapture::lines[0].second, fmt("lm_ggml_graph_dump_dot: dot -Tpng %s -o %s.png && open %s.png\n",
                                               path.c_str(), path.c_str(), path.c_str()));

    const std::vector<std::string> lines = read_lines(path);
    std::vector<std::string> expected = {"digraph G {", "  newrank = true;", "  rankdir = TB;"};
    for (int i = 0; i < gf->n_nodes; i++) {
        const lm_ggml_tensor * t = gf->nodes[i];
        std::string name_part = t->name[0] ? fmt("%s (f32)|", t->name) : "(f32)|";
        if (t == c) name_part = "sum\\|\\<x\\> (f32)|";
        expected.push_back(node_line(t, i, "white", name_part.c_str()));
    }
    ASSERT_EQ(gf->n_leafs, 3);
    for (int i = 0; i < gf->n_leafs; i++) {
        const lm_ggml_tensor * t = gf->leafs[i];
        std::string line = fmt("  \"%p\" [ style = filled; fillcolor = pink; shape = record; label=\"<x>", (void *) t);
        line += t->name[0] ? fmt("%s (f32)|", t->name) : std::string("(f32)|");
        line += fmt("CONST %d [%" PRId64 ", %" PRId64 "]", i, t->ne[0], t->ne[1]);
        if (t == s) line += " | (#, #)";
        expected.push_back(line + "\"; ]");
    }
    for (int i = 0; i < gf->n_nodes; i++) {
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (gf->nodes[i]->src[j]) {
                expected.push_back(edge_line(gf->nodes[i]->src[j], "x", gf->nodes[i], "x", false, j));
            }
        }
    }
    expected.push_back("}");
    ASSERT_EQ(lines.size(), expected.size());
    for (size_t i = 0; i < lines.size(); i++) {
        EXPECT_EQ(lines[i], expected[i]) << "line " << i;
    }

    // spot checks written out in full
    EXPECT_EQ(lines[3], fmt("  \"%p\" [ style = filled; fillcolor = white; shape = record; "
                            "label=\"sum\\|\\<x\\> (f32)|0 [4, 3] | <x>x+y\"; ]",
                            (void *) c));
    EXPECT_EQ(lines[5], fmt("  \"%p\" [ style = filled; fillcolor = white; shape = record; "
                            "label=\"r (f32)|2 [2, 2, 3] | <x>reshape(x)\"; ]",
                            (void *) r));

    if (have_dot()) {
        EXPECT_EQ(std::system(("dot -Tplain '" + path + "' -o /dev/null").c_str()), 0);
    }
    std::filesystem::remove(path);
    lm_ggml_free(ctx);
}

TEST(GraphDot, GradientsFoldIntoTheirNode) {
    lm_ggml_init_params ip = {1 << 20, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_set_name(x, "x");
    lm_ggml_tensor * y = lm_ggml_sqr(ctx, x);
    lm_ggml_set_name(y, "y");
    lm_ggml_tensor * z = lm_ggml_scale(ctx, y, 2.0f);
    lm_ggml_set_name(z, "z");
    z->flags |= LM_GGML_TENSOR_FLAG_PARAM;
    lm_ggml_tensor * gz = lm_ggml_neg(ctx, z); // stands in as y's gradient
    lm_ggml_set_name(gz, "gz");
    lm_ggml_cgraph * gb = lm_ggml_new_graph_custom(ctx, 16, true);
    lm_ggml_build_forward_expand(gb, gz);
    ASSERT_EQ(gb->n_nodes, 3);
    ASSERT_NE(gb->grads, nullptr);
    const size_t slot = lm_ggml_hash_find(&gb->visited_hash_set, y);
    ASSERT_NE(slot, LM_GGML_HASHSET_FULL);
    gb->grads[slot] = gz;

    // a forward graph without y: y's record is light blue instead of green
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, lm_ggml_sqrt(ctx, x));

    const std::string path = temp_file("lmggml-dot-grad");
    for (int with_gf = 0; with_gf < 2; with_gf++) {
        lm_ggml_graph_dump_dot(gb, with_gf ? gf : nullptr, path.c_str());
        const std::vector<std::string> lines = read_lines(path);
        const std::vector<std::string> expected = {
            "digraph G {",
            "  newrank = true;",
            "  rankdir = TB;",
            node_line(y, 0, with_gf ? "lightblue" : "green", "y (f32)|", lm_ggml_op_symbol(gz->op)),
            node_line(z, 1, "yellow", "z (f32)|"),
            // gz: not drawn
            fmt("  \"%p\" [ style = filled; fillcolor = pink; shape = record; label=\"<x>x (f32)|CONST 0 [4, 1]\"; ]",
                (void *) x),
            edge_line(x, "x", y, "x", false, 0),
            edge_line(y, "x", z, "x", false, 0),
            edge_line(z, "x", y, "g", true, 0), // gz's edge lands on y's <g> field
            "}",
        };
        EXPECT_EQ(lines, expected) << "with_gf " << with_gf;
        if (have_dot()) {
            EXPECT_EQ(std::system(("dot -Tplain '" + path + "' -o /dev/null").c_str()), 0);
        }
    }
    std::filesystem::remove(path);
    lm_ggml_free(ctx);
}

TEST(GraphDot, BadArgumentsAreLoggedErrors) {
    lm_ggml_init_params ip = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    LogCapture log;
    lm_ggml_graph_dump_dot(nullptr, nullptr, "x.dot");
    lm_ggml_graph_dump_dot(g, nullptr, nullptr);
    lm_ggml_graph_dump_dot(g, nullptr, "/nonexistent-dir/x.dot");
    EXPECT_EQ(LogCapture::errors(), 3u);
    lm_ggml_free(ctx);
}

TEST(GraphFiles, ExportAndImportAreUnsupported) {
    lm_ggml_init_params ip = {1 << 16, nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    const std::string path = temp_file("lmggml-export");
    LogCapture log;
    lm_ggml_graph_export(g, path.c_str());
    EXPECT_EQ(LogCapture::errors(), 1u);
    EXPECT_FALSE(std::filesystem::exists(path));

    lm_ggml_context * data = ctx;
    lm_ggml_context * eval = ctx;
    EXPECT_EQ(lm_ggml_graph_import(path.c_str(), &data, &eval), nullptr);
    EXPECT_EQ(data, nullptr);
    EXPECT_EQ(eval, nullptr);
    EXPECT_EQ(lm_ggml_graph_import(nullptr, nullptr, nullptr), nullptr);
    EXPECT_EQ(LogCapture::errors(), 3u);
    lm_ggml_free(ctx);
}
