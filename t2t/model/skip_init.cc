#include "t2t/model/skip_init.h"

namespace t2t {
namespace {
thread_local bool skipping = false;
}  // namespace

SkipInitialization::SkipInitialization() : previous_(skipping) { skipping = true; }
SkipInitialization::~SkipInitialization() { skipping = previous_; }
bool skip_initialization() { return skipping; }

}  // namespace t2t
