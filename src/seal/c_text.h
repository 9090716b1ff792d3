// Text helpers of the C export: integer literals, comments, parameter names and message-building lines.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace forgek {

inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// `v` as a C int64_t literal: INT64_C(v), or INT64_MIN, which no literal spells.
std::string CInt64Literal(int64_t v);

// Free text inside a /* */ comment: nothing that closes or opens a comment or forms a trigraph.
std::string CommentText(const std::string& text);

// Words wrapped into comment lines of at most `width` characters, each starting with " * ".
std::string CommentBlock(const std::string& text, size_t width = 96);

// A name of the operator (tensor, scalar, size) as a parameter of the generated functions: as it
// is, unless C or C++ reserves it, a standard header defines it as a macro, it is one of the
// function's own parameters, or it starts like the generated locals (fk_, v_).
std::string CParamName(const std::string& name);

// True, with the number in *value, where the text of an "f32:" argument is a plain number (a literal
// the launch writes into its code) rather than an expression; read with strtod, as the worker reads it.
bool F32Literal(const std::string& text, double* value);

// One piece of a message the generated C builds in a char array: a C expression, of type
// const char* (appended by fk_append) or, where `integer`, int64_t (appended by fk_append_int).
struct CMessagePiece {
  std::string expr;
  bool integer = false;
};

// The statements that append `pieces` to the message in char array `buffer`, each on a line of its own.
std::string AppendLines(const std::string& indent, const std::string& buffer,
                        const std::vector<CMessagePiece>& pieces);

}  // namespace forgek
