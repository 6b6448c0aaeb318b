// Building a model whose every parameter a checkpoint is about to set: while
// a SkipInitialization is alive on this thread, models leave their large
// parameters (dense weights, embeddings) uninitialized, as torch::empty
// makes them. Untouched, their pages are never made resident, so a decoder
// that loads a model pays neither the time of drawing tens of millions of
// random numbers nor the memory of a float copy of weights that an int8
// checkpoint replaces. Models that honour it ask skip_initialization().
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
