/* Counts the guest instructions a qemu-user process executes (TCG plugin).
 * Written from the QEMU 7.2 plugin API (version 1): each translated block
 * adds its instruction count to a counter inline every time it runs.
 * Prints "insns: N" to stderr (or to the file given by out=PATH) at exit. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
    const char * target_name;
    struct {
        int min;
        int cur;
    } version;
    int system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb * tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void * userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb * tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb * tb, enum qemu_plugin_op op, void * ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void * userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* one counter for all threads: inline adds race between vCPU threads, so the
 * measured programs run with one thread */
static uint64_t insns;
static char out_path[512];

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb * tb) {
    (void) id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns(tb));
}

static void on_exit_cb(qemu_plugin_id_t id, void * p) {
    (void) id;
    (void) p;
    FILE * f = out_path[0] ? fopen(out_path, "w") : stderr;
    if (!f) f = stderr;
    fprintf(f, "insns: %llu\n", (unsigned long long) insns);
    if (f != stderr) fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t * info, int argc,
                                                               char ** argv) {
    (void) info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
