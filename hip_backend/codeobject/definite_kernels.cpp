// SPDX-License-Identifier: MIT
// definite_kernels.cpp - extern "C" kernels every compile of a request must produce, by a lexical
// scan that gives up wherever the preprocessor could change the answer.
#include "hip_backend/codeobject/definite_kernels.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace hipacm::backend {

namespace {

enum class Kind { kEnd, kIdentifier, kString, kPunct, kOther };

struct Token {
  Kind kind = Kind::kEnd;
  std::string_view text;
};

bool is_identifier_start(unsigned char c) {
  // Bytes >= 0x80 count as letters: UTF-8 identifiers are valid, and invalid
  // UTF-8 must not derail the scan.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}
bool is_identifier_char(unsigned char c) {
  return is_identifier_start(c) || (c >= '0' && c <= '9');
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// A C++ lexer that only knows what it needs: comments, literals, preprocessor
// lines and identifiers. Every conditional block (#if, #ifdef, #ifndef, with
// all its branches) is skipped: what it defines depends on macros, and only
// what every compile defines is wanted. #define'd names are collected
// from every branch. Copying it is a cheap
// checkpoint for look-ahead. Every loop advances, so any input terminates.
class Lexer {
 public:
  explicit Lexer(std::string_view source) : s_(source) {}

  Token next() {
    while (true) {
      skip_space_and_comments();
      if (pos_ >= s_.size()) return {Kind::kEnd, {}};
      if (s_[pos_] == '#' && at_line_start_) {
        directive();
        continue;
      }
      at_line_start_ = false;
      Token token = lex_token();
      if (skip_depth_ == 0) return token;
    }
  }

 private:
  void skip_space_and_comments() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\n') {
        at_line_start_ = true;
        ++pos_;
      } else if (is_space(c) || (c == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n')) {
        pos_ += c == '\\' ? 2 : 1;
      } else if (s_.compare(pos_, 2, "//") == 0) {
        skip_line();
      } else if (s_.compare(pos_, 2, "/*") == 0) {
        const std::size_t end = s_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else {
        return;
      }
    }
  }

  // To the end of the line, honouring backslash continuations; stays before '\n'.
  void skip_line() {
    while (pos_ < s_.size() && s_[pos_] != '\n') {
      pos_ += (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ? 2 : 1;
    }
  }

  void directive() {
    const std::size_t start = pos_ + 1;
    skip_line();
    std::string_view line = s_.substr(start, pos_ - start);
    auto trim = [](std::string_view text) {
      while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
      while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
      return text;
    };
    line = trim(line);
    std::size_t word_end = 0;
    while (word_end < line.size() &&
           is_identifier_char(static_cast<unsigned char>(line[word_end]))) {
      ++word_end;
    }
    const std::string_view word = line.substr(0, word_end);
    const std::string_view argument = trim(line.substr(word_end));
    const bool opens = word == "if" || word == "ifdef" || word == "ifndef";
    if (opens) {
      ++skip_depth_;
    } else if (word == "endif") {
      if (skip_depth_ > 0) --skip_depth_;
    } else if (word == "define") {  // in any branch: it may be the one compiled
      std::size_t end = 0;
      while (end < argument.size() && is_identifier_char(static_cast<unsigned char>(argument[end])))
        ++end;
      if (end > 0) macros_.emplace(argument.substr(0, end));
    }
  }

 public:
  /// Names #define'd anywhere so far, in any branch of any conditional.
  const std::unordered_set<std::string>& macros() const { return macros_; }

 private:
  Token lex_token() {
    const std::size_t start = pos_;
    const auto c = static_cast<unsigned char>(s_[pos_]);
    if (is_identifier_start(c)) {
      while (pos_ < s_.size() && is_identifier_char(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      const std::string_view word = s_.substr(start, pos_ - start);
      if (pos_ < s_.size() && s_[pos_] == '"' && is_raw_prefix(word)) {
        raw_string();
        return {Kind::kOther, s_.substr(start, pos_ - start)};
      }
      return {Kind::kIdentifier, word};
    }
    if (c >= '0' && c <= '9') {
      number();
      return {Kind::kOther, s_.substr(start, pos_ - start)};
    }
    if (c == '"' || c == '\'') {
      quoted(static_cast<char>(c));
      return {c == '"' ? Kind::kString : Kind::kOther, s_.substr(start, pos_ - start)};
    }
    ++pos_;
    return {Kind::kPunct, s_.substr(start, 1)};
  }

  static bool is_raw_prefix(std::string_view word) {
    return word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R";
  }

  // pp-number, including digit separators (1'000) and exponent signs.
  void number() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if ((c == '+' || c == '-') && pos_ > 0) {
        const char prev = s_[pos_ - 1];
        if (prev != 'e' && prev != 'E' && prev != 'p' && prev != 'P') return;
        ++pos_;
      } else if (c == '\'' && pos_ + 1 < s_.size() &&
                 is_identifier_char(static_cast<unsigned char>(s_[pos_ + 1]))) {
        pos_ += 2;
      } else if (c == '.' || is_identifier_char(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  // An ordinary literal ends at its quote or, unterminated, at the end of the
  // line, so a stray apostrophe in `#if 0` prose cannot eat the file.
  void quoted(char quote) {
    ++pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\\' && pos_ + 1 < s_.size()) {
        pos_ += 2;
      } else if (c == quote) {
        ++pos_;
        return;
      } else if (c == '\n') {
        return;
      } else {
        ++pos_;
      }
    }
  }

  // R"delim( ... )delim"
  void raw_string() {
    const std::size_t open = s_.find('(', pos_ + 1);
    const std::size_t delim_length = open == std::string_view::npos ? 0 : open - pos_ - 1;
    if (open == std::string_view::npos || delim_length > 16 ||
        s_.substr(pos_ + 1, delim_length).find_first_of(" \\)\n\t\"") != std::string_view::npos) {
      quoted('"');  // not a valid raw string: lex it as an ordinary one
      return;
    }
    std::string closing = ")";
    closing.append(s_.substr(pos_ + 1, delim_length));
    closing += '"';
    const std::size_t end = s_.find(closing, open + 1);
    pos_ = end == std::string_view::npos ? s_.size() : end + closing.size();
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  bool at_line_start_ = true;
  int skip_depth_ = 0;
  std::unordered_set<std::string> macros_;
};

bool is_punct(const Token& token, char c) {
  return token.kind == Kind::kPunct && token.text.size() == 1 && token.text[0] == c;
}

// A checkpointed lexer for trying one declaration. All attempts share one
// token budget, linear in the source size, so hostile input (say a long run of
// `{}f(`) cannot make the scan quadratic; once spent, attempts just fail.
class LookAhead {
 public:
  LookAhead(const Lexer& from, std::size_t* budget) : lexer_(from), budget_(budget) {}
  Token next() {
    if (*budget_ == 0) return {Kind::kEnd, {}};
    --*budget_;
    return lexer_.next();
  }

 private:
  Lexer lexer_;
  std::size_t* budget_;
};

// Skips a balanced group whose opening token was just read; false at the end.
bool skip_group(LookAhead* lexer, char open, char close) {
  int depth = 1;
  while (depth > 0) {
    const Token token = lexer->next();
    if (token.kind == Kind::kEnd) return false;
    if (is_punct(token, open)) ++depth;
    if (is_punct(token, close)) --depth;
  }
  return true;
}

bool is_attribute_keyword(std::string_view word) {
  return word == "__launch_bounds__" || word == "__attribute__" || word == "__declspec" ||
         word == "alignas" || word == "__attribute" || word == "__launch_bounds";
}

bool ends_declaration_attempt(std::string_view word) {
  return word == "struct" || word == "class" || word == "union" || word == "enum" ||
         word == "template" || word == "typedef" || word == "namespace" || word == "extern" ||
         word == "operator" || word == "using" || word == "return";
}

// Skips `[[...]]`, `__attribute__((...))` and `noexcept` after a parameter
// list; returns the first other token.
Token skip_trailing_attributes(LookAhead* lexer) {
  while (true) {
    Token token = lexer->next();
    if (token.kind == Kind::kIdentifier && is_attribute_keyword(token.text)) {
      if (!is_punct(lexer->next(), '(') || !skip_group(lexer, '(', ')')) return {Kind::kEnd, {}};
      continue;
    }
    if (token.kind == Kind::kIdentifier && token.text == "noexcept") continue;
    if (is_punct(token, '[')) {
      if (!skip_group(lexer, '[', ']')) return {Kind::kEnd, {}};
      continue;
    }
    return token;
  }
}

// Reads one declaration and returns the kernel name if it is
// `... __global__ ... void NAME(...) {`; a declaration without a body is not
// counted, since it produces no kernel descriptor.
std::string_view kernel_definition(LookAhead lexer) {
  bool saw_global = false;
  bool saw_void = false;
  std::string_view name;
  Token previous;
  for (int steps = 0; steps < 256; ++steps) {
    const Token token = lexer.next();
    if (token.kind == Kind::kIdentifier) {
      if (is_attribute_keyword(token.text)) {
        if (!is_punct(lexer.next(), '(') || !skip_group(&lexer, '(', ')')) return {};
      } else if (token.text == "__global__") {
        if (!name.empty()) return {};
        saw_global = true;
      } else if (token.text == "void") {
        if (!name.empty()) return {};
        saw_void = true;
      } else if (ends_declaration_attempt(token.text)) {
        return {};
      } else if (saw_void) {
        if (!name.empty()) return {};
        name = token.text;
      }
      // Other identifiers before `void` are specifiers or attribute macros.
    } else if (is_punct(token, '(')) {
      if (!name.empty()) {
        if (!skip_group(&lexer, '(', ')')) return {};
        const Token after = skip_trailing_attributes(&lexer);
        return saw_global && is_punct(after, '{') ? name : std::string_view{};
      }
      // An attribute-like macro call before the return type: MY_ATTRS(256).
      if (previous.kind != Kind::kIdentifier || !skip_group(&lexer, '(', ')')) return {};
    } else if (is_punct(token, '[')) {
      if (!skip_group(&lexer, '[', ']')) return {};
    } else {
      return {};
    }
    previous = token;
  }
  return {};
}

class Scanner {
 public:
  explicit Scanner(std::string_view source) : lexer_(source), budget_(4 * source.size() + 4096) {}

  std::vector<std::string> run() {
    for (Token token = lexer_.next(); token.kind != Kind::kEnd; token = lexer_.next()) {
      if (token.kind != Kind::kIdentifier || token.text != "extern") continue;
      const Lexer after_extern = lexer_;
      const Token language = lexer_.next();
      if (language.kind != Kind::kString || language.text != "\"C\"") {
        lexer_ = after_extern;
        continue;
      }
      const Lexer body_start = lexer_;
      if (is_punct(lexer_.next(), '{')) {
        block();
      } else {
        lexer_ = body_start;
        add(kernel_definition(LookAhead(lexer_, &budget_)));
      }
    }
    return std::move(names_);
  }

  /// Names the scanned text #define'd (valid after run()).
  const std::unordered_set<std::string>& macros() const { return lexer_.macros(); }

 private:
  // extern "C" { ... }: try a kernel at every declaration start at depth 1.
  void block() {
    int depth = 1;
    bool declaration_start = true;
    while (depth > 0) {
      if (declaration_start && depth == 1) add(kernel_definition(LookAhead(lexer_, &budget_)));
      const Token token = lexer_.next();
      if (token.kind == Kind::kEnd) return;
      declaration_start = false;
      if (is_punct(token, '{')) {
        ++depth;
      } else if (is_punct(token, '}')) {
        --depth;
        declaration_start = true;
      } else if (is_punct(token, ';')) {
        declaration_start = true;
      }
    }
  }

  void add(std::string_view name) {
    if (!name.empty() && seen_.insert(name).second) names_.emplace_back(name);
  }

  Lexer lexer_;
  std::size_t budget_;
  std::vector<std::string> names_;
  std::unordered_set<std::string_view> seen_;
};

}  // namespace

std::vector<std::string> definite_extern_c_kernels(const CompileRequest& request) {
  Scanner source(request.source);
  std::vector<std::string> kernels = source.run();
  // A kernel whose name a macro could replace may be called anything.
  std::unordered_set<std::string> macros = source.macros();
  for (const auto& header : request.headers) {
    Scanner scanner(header.second);
    scanner.run();
    macros.insert(scanner.macros().begin(), scanner.macros().end());
  }
  for (std::size_t i = 0; i < request.options.size(); ++i) {
    std::string_view option = request.options[i];
    if (option.substr(0, 2) != "-D") continue;
    option.remove_prefix(2);
    if (option.empty() && i + 1 < request.options.size()) option = request.options[++i];
    macros.emplace(option.substr(0, std::min(option.find('='), option.find('('))));
  }
  std::vector<std::string> out;
  for (std::string& name : kernels)
    if (macros.count(name) == 0) out.push_back(std::move(name));
  return out;
}

}  // namespace hipacm::backend
