// sacreBLEU's `13a`, `intl`, `zh`, `char` and `none` tokenizers and T2T's
// bleu_hook.bleu_tokenize, splitting exactly where they do: each rule is
// one of their re.sub substitutions, on code points.
#pragma once

#include <string>
#include <vector>

namespace t2t::bleu_tok {

using Tokens = std::vector<std::u32string>;

// sacreBLEU's preprocessing of one segment: optional str.lower(), rstrip(),
// then the tokenizer `name` (13a | intl | zh | char | none), then split().
// Throws t2t::Error for another name.
Tokens sacrebleu_tokens(const std::u32string& line, const std::string& name, bool lowercase);

// T2T's bleu_tokenize (after bleu_wrapper's optional lowercasing).
Tokens t2t_tokens(const std::u32string& line, bool lowercase);

// Python's str.split() with no argument.
Tokens split_whitespace(const std::u32string& s);

// True for the characters sacreBLEU's zh tokenizer puts spaces around.
bool is_sacrebleu_chinese_char(char32_t c);

// The tokenizer names sacrebleu_tokens accepts, for messages.
const std::vector<std::string>& sacrebleu_tokenizer_names();
// "13a, intl, zh, char or none".
std::string sacrebleu_tokenizer_list();

}  // namespace t2t::bleu_tok
