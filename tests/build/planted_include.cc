// A source that poses as module cli and includes module run's headers: the private_include_* tests
// build it three ways. Run's private header (src/run/run_state.h) must not be found under either
// spelling; run's public header must be (the control: the target itself is sound).
#if defined(FORGEK_PLANT_MODULE_SPELLING)
#include "run/run_state.h"
#elif defined(FORGEK_PLANT_LOCAL_SPELLING)
#include "run_state.h"
#else
#include "forgek/run/run.h"
#endif

namespace forgek {
int PlantedIncludeCompiled() { return 1; }
}  // namespace forgek
