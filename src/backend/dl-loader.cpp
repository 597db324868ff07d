// Dynamic loading of backend plugins (dlopen). A plugin is a shared library
// exporting lm_ggml_backend_init (returns its reg) and optionally
// lm_ggml_backend_score (0 = cannot run here; higher = better). Files are
// named liblmggml-<backend>[-<variant>].so; among the variants of one backend
// found in a directory only the best-scoring one is loaded.

#include "backend/backend-internal.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr const char * kPrefix = "liblmggml-";
constexpr const char * kSuffix = ".so";

const char * dl_error_text() {
    const char * e = dlerror();
    return e ? e : "unknown error";
}

// The plugin's score, or 1 when it exports no score function (loadable, but
// any variant that does report a score is preferred).
int plugin_score(void * handle) {
    auto score_fn = reinterpret_cast<lm_ggml_backend_score_t>(dlsym(handle, "lm_ggml_backend_score"));
    return score_fn ? score_fn() : 1;
}

// "liblmggml-refdev-avx2.so" -> "refdev"; "" when the name does not match.
std::string backend_name_of(const std::string & filename) {
    const std::string prefix = kPrefix;
    const std::string suffix = kSuffix;
    if (filename.size() <= prefix.size() + suffix.size() || filename.compare(0, prefix.size(), prefix) != 0 ||
        filename.compare(filename.size() - suffix.size(), suffix.size(), suffix) != 0) {
        return {};
    }
    const size_t end = filename.find_first_of("-.", prefix.size());
    return filename.substr(prefix.size(), end - prefix.size());
}

// Loads the highest-scoring variant among `paths` (all one backend).
void load_best_variant(const std::string & name, std::vector<fs::path> & paths) {
    if (lm_ggml_backend_reg_by_name(name.c_str()) != nullptr) {
        return; // e.g. a second scan of the same directory
    }
    std::sort(paths.begin(), paths.end()); // ties resolve the same way every run
    int best_score = 0;
    const fs::path * best = nullptr;
    // The probed libraries stay open until the winner is loaded: closing
    // them first would unmap the winner and run its static initializers a
    // second time on load (leaking what the first run allocated).
    std::vector<void *> probed;
    for (const fs::path & p : paths) {
        void * handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            LM_GGML_LOG_ERROR("lm_ggml_backend_load_all_from_path: %s: cannot load: %s\n", p.c_str(), dl_error_text());
            continue;
        }
        probed.push_back(handle);
        const int score = plugin_score(handle);
        if (score > best_score) {
            best_score = score;
            best = &p;
        }
    }
    if (best == nullptr) {
        LM_GGML_LOG_INFO("lm_ggml_backend_load_all_from_path: backend %s: no variant can run on this system\n",
                         name.c_str());
    } else {
        lm_ggml_backend_load(best->c_str());
    }
    for (void * handle : probed) {
        dlclose(handle);
    }
}

} // namespace

lm_ggml_backend_reg_t lm_ggml_backend_load(const char * path) {
    LMGGML_CHECK_ARG(path, nullptr);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        LM_GGML_LOG_ERROR("%s: %s: no such file\n", __func__, path);
        return nullptr;
    }
    void * handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        LM_GGML_LOG_ERROR("%s: %s: not a loadable library: %s\n", __func__, path, dl_error_text());
        return nullptr;
    }
    auto score_fn = reinterpret_cast<lm_ggml_backend_score_t>(dlsym(handle, "lm_ggml_backend_score"));
    if (score_fn != nullptr && score_fn() <= 0) {
        LM_GGML_LOG_INFO("%s: %s: not supported on this system (score 0), not registered\n", __func__, path);
        dlclose(handle);
        return nullptr;
    }
    auto init_fn = reinterpret_cast<lm_ggml_backend_init_t>(dlsym(handle, "lm_ggml_backend_init"));
    if (init_fn == nullptr) {
        LM_GGML_LOG_ERROR("%s: %s: does not export lm_ggml_backend_init\n", __func__, path);
        dlclose(handle);
        return nullptr;
    }
    lm_ggml_backend_reg_t reg = nullptr;
    try {
        reg = init_fn();
    } catch (...) {
        reg = nullptr;
    }
    if (reg == nullptr) {
        LM_GGML_LOG_ERROR("%s: %s: lm_ggml_backend_init returned no backend\n", __func__, path);
        dlclose(handle);
        return nullptr;
    }
    // Only the version field is read: a reg of another API version may lay
    // out its interface differently, so none of its functions is called.
    if (reg->api_version != LM_GGML_BACKEND_API_VERSION) {
        LM_GGML_LOG_ERROR("%s: %s: api_version %d, expected %d: refused\n", __func__, path, reg->api_version,
                          LM_GGML_BACKEND_API_VERSION);
        dlclose(handle);
        return nullptr;
    }
    switch (lmggml::backend::registry_add_loaded(reg, handle)) {
        case lmggml::backend::LoadAdd::already_registered:
            // the same library again: dlopen only bumped its reference count
            LM_GGML_LOG_INFO("%s: %s: backend %s is already loaded\n", __func__, path, lm_ggml_backend_reg_name(reg));
            dlclose(handle);
            return reg;
        case lmggml::backend::LoadAdd::failed: dlclose(handle); return nullptr;
        case lmggml::backend::LoadAdd::added: break;
    }
    LM_GGML_LOG_INFO("%s: loaded backend %s from %s\n", __func__, lm_ggml_backend_reg_name(reg), path);
    return reg;
}

void lm_ggml_backend_unload(lm_ggml_backend_reg_t reg) {
    LMGGML_CHECK_ARG_VOID(reg);
    bool found = false;
    void * handle = lmggml::backend::registry_remove(reg, &found);
    if (!found) {
        LM_GGML_LOG_ERROR("%s: reg %p: is not registered\n", __func__, (void *) reg);
        return;
    }
    // The caller must have freed every backend, buffer and event of this reg:
    // their code goes away here.
    if (handle != nullptr) {
        dlclose(handle);
    }
}

void lm_ggml_backend_load_all_from_path(const char * dir_path) {
    LMGGML_CHECK_ARG_VOID(dir_path);
    std::error_code ec;
    if (!fs::is_directory(dir_path, ec)) {
        LM_GGML_LOG_ERROR("%s: %s: not a directory\n", __func__, dir_path);
        return;
    }
    std::map<std::string, std::vector<fs::path>> variants; // backend name -> files
    try {
        for (const fs::directory_entry & entry :
             fs::directory_iterator(dir_path, fs::directory_options::skip_permission_denied, ec)) {
            std::error_code ec2;
            if (!entry.is_regular_file(ec2)) {
                continue;
            }
            const std::string name = backend_name_of(entry.path().filename().string());
            if (!name.empty()) {
                variants[name].push_back(entry.path());
            }
        }
        if (ec) {
            LM_GGML_LOG_ERROR("%s: %s: cannot list: %s\n", __func__, dir_path, ec.message().c_str());
            return;
        }
        for (auto & [name, paths] : variants) {
            load_best_variant(name, paths);
        }
    } catch (const std::exception & e) {
        LM_GGML_LOG_ERROR("%s: %s: %s\n", __func__, dir_path, e.what());
    }
}

namespace {

// Where lm_ggml_backend_load_all looks, in order (a backend found in an
// earlier folder wins): LMGGML_BACKEND_PATH (folders separated by ':') when
// set, else the executable's folder, its build tree's plugins/ (bin/../plugins),
// its install prefix's lib/lmggml (bin/../lib/lmggml), and the folder of the
// library itself with its lmggml/ (install) and plugins/ (build tree)
// subfolders: an installed liblmggml.so finds <libdir>/lmggml/ whatever
// program loaded it.
std::vector<fs::path> plugin_search_path() {
    std::vector<fs::path> dirs;
    const char * env = std::getenv("LMGGML_BACKEND_PATH");
    if (env != nullptr && env[0] != '\0') {
        std::string list = env;
        size_t start = 0;
        while (start <= list.size()) {
            const size_t end = std::min(list.find(':', start), list.size());
            if (end > start) {
                dirs.emplace_back(list.substr(start, end - start));
            }
            start = end + 1;
        }
        return dirs;
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path bin = exe.parent_path();
        dirs.push_back(bin);
        dirs.push_back(bin.parent_path() / "plugins");
        dirs.push_back(bin.parent_path() / "lib" / LMGGML_PLUGIN_SUBDIR);
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void *>(&lm_ggml_backend_load_all), &info) != 0 && info.dli_fname != nullptr) {
        const fs::path lib = fs::absolute(info.dli_fname, ec).parent_path();
        if (!ec) {
            dirs.push_back(lib / LMGGML_PLUGIN_SUBDIR);
            dirs.push_back(lib / "plugins"); // a build tree: <build>/liblmggml.so, <build>/plugins
            dirs.push_back(lib);
        }
    }
    return dirs;
}

} // namespace

void lm_ggml_backend_load_all(void) {
    std::vector<fs::path> seen;
    std::string listed;
    for (const fs::path & dir : plugin_search_path()) {
        std::error_code ec;
        const fs::path canon = fs::weakly_canonical(dir, ec);
        const fs::path & key = ec ? dir : canon;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            continue;
        }
        seen.push_back(key);
        if (!listed.empty()) {
            listed.push_back(':');
        }
        listed.append(key.string());
        if (fs::is_directory(key, ec)) {
            lm_ggml_backend_load_all_from_path(key.c_str());
        }
    }
    LM_GGML_LOG_INFO("lm_ggml_backend_load_all: plugin search path: %s\n", listed.empty() ? "(none)" : listed.c_str());
}
