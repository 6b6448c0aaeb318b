// While a SkipInitialization is alive on this thread, models leave their
// large parameters uninitialized (torch::empty), as a checkpoint is about
// to set them: no time spent drawing them, no pages made resident. Models
// that honour it ask skip_initialization().
#pragma once

namespace t2t {

class SkipInitialization {
 public:
  SkipInitialization();
  ~SkipInitialization();
  SkipInitialization(const SkipInitialization&) = delete;
  SkipInitialization& operator=(const SkipInitialization&) = delete;

 private:
  bool previous_;
};

bool skip_initialization();

}  // namespace t2t
