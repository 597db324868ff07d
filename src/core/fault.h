#pragma once
// Fault injection for the reliability tests (tests/reliability, docs/RELIABILITY.md).
//
// Allocation sites call lm_fault_should_fail() and, when it answers true,
// behave exactly as if their allocation had failed (log one line, return
// NULL / an error). A test then walks N over every allocation of a scenario:
// lm_fault_set_fail_at(N) makes the N-th counted allocation fail.
//
// Only a build configured with -DLMGGML_FAULT_INJECTION=ON has the counter
// and exports the control functions; in every other build the hook is an
// inline `false` and costs nothing. Self-contained (no other lmggml header),
// so tests may include it directly.

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifdef LMGGML_FAULT_INJECTION

#define LM_FAULT_API __attribute__((visibility("default")))

// Counts one allocation (thread-safe); true when it is the armed one.
LM_FAULT_API bool lm_fault_should_fail(void);

// Resets the counter to 0 and arms the n-th allocation from now on to fail
// (once). n <= 0 disarms: allocations are only counted.
LM_FAULT_API void lm_fault_set_fail_at(long n);

// Allocations counted since the last lm_fault_set_fail_at.
LM_FAULT_API long lm_fault_count(void);

// Failures injected since the last lm_fault_set_fail_at (0 or 1).
LM_FAULT_API long lm_fault_injected(void);

#else

static inline bool lm_fault_should_fail(void) { return false; }

#endif

#ifdef __cplusplus
}
#endif
