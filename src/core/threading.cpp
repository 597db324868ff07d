// The library-wide critical section (include/ggml-threading.h).
#include "ggml-threading.h"

#include <mutex>

namespace {

// Never destroyed: a plugin may take the lock while static destructors run.
std::mutex & critical_mutex() {
    static std::mutex * m = new std::mutex;
    return *m;
}

} // namespace

extern "C" void lm_ggml_critical_section_start(void) { critical_mutex().lock(); }

extern "C" void lm_ggml_critical_section_end(void) { critical_mutex().unlock(); }
