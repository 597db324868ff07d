#include "op_case.h"

namespace opstest {

void add_custom_cases(CaseList & /*t1*/, CaseList & /*t2*/) {
}

} // namespace opstest
