// The JSON body of t2t-serve's POST /translate.
#include "fuzz/fuzz_target.h"
#include "t2t/serve/translate_api.h"

T2T_FUZZ_TARGET(translate_request) {
  try {
    const auto request = t2t::parse_translate_request(std::string(data), {});
    t2t::request_search(request, {});
  } catch (const t2t::ApiError&) {
  } catch (const t2t::Error&) {
  }
}
