#include "op_case.h"

namespace opstest {

void add_sequence_cases(CaseList & /*t1*/, CaseList & /*t2*/) {
}

} // namespace opstest
