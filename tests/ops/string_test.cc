// String ops: StringJoin, Substr, RegexReplace, StaticRegexReplace,
// RegexFullMatch, StaticRegexFullMatch, StringToNumber, AsString. Expected outputs are hand computed or from
// TensorFlow's documented examples; every error path is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

void ExpectStrings(const Tensor& t, const Dims& dims, const std::vector<std::string>& want) {
  ASSERT_EQ(t.dtype(), GR_STRING);
  EXPECT_EQ(DimsOf(t), dims);
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.string_at(static_cast<int64_t>(i)), want[i]) << "at " << i;
}

// ============================================================ StringJoin

TEST(StringJoinTest, BroadcastsScalarsWithSeparator) {
  std::vector<Tensor> out = RunOp("StringJoin", {Fed(Strings({2}, {"a", "b"})), Fed(Str("-")), Fed(Strings({2}, {"x", ""}))},
                                  IntAttr("N", 3) + StrAttr("separator", "/"));
  ExpectStrings(out[0], {2}, {"a/-/x", "b/-/"});
  // Only scalars: a scalar; the default separator is empty.
  out = RunOp("StringJoin", {Fed(Str("ab")), Fed(Str("cd"))}, IntAttr("N", 2));
  ExpectStrings(out[0], {}, {"abcd"});
  // Empty and 2-D shapes.
  out = RunOp("StringJoin", {Fed(Strings({0, 3}, {})), Fed(Str("z"))}, IntAttr("N", 2));
  ExpectStrings(out[0], {0, 3}, {});
  out = RunOp("StringJoin", {Fed(Strings({2, 1}, {"p", "q"})), Fed(Strings({2, 1}, {"1", "2"}))},
              IntAttr("N", 2) + StrAttr("separator", ", "));
  ExpectStrings(out[0], {2, 1}, {"p, 1", "q, 2"});
}

TEST(StringJoinTest, MismatchedShapesAreAnError) {
  std::vector<Tensor> out;
  Status s = TryOp("StringJoin", {Fed(Strings({2}, {"a", "b"})), Fed(Strings({3}, {"x", "y", "z"}))}, IntAttr("N", 2),
                   1, &out);
  EXPECT_ERROR(s, Code::kInvalidArgument, "Input shapes do not match", "[2]", "[3]");
}

// ================================================================ Substr

TEST(SubstrTest, ByteScalarPosAndLen) {
  for (DataType t : {GR_INT32, GR_INT64}) {
    // TensorFlow's doc example: input ['Hello', 'World'], pos 1, len 3 -> ['ell', 'orl'].
    std::vector<Tensor> out = RunOp("Substr", {Fed(Strings({2}, {"Hello", "World"})), Fed(IntScalar(1, t)), Fed(IntScalar(3, t))},
                                    TAttr(t));
    ExpectStrings(out[0], {2}, {"ell", "orl"});
    // len past the end is clipped; pos == length gives "".
    out = RunOp("Substr", {Fed(Strings({3}, {"abc", "abcdef", "xyz"})), Fed(IntScalar(3, t)), Fed(IntScalar(10, t))},
                TAttr(t));
    ExpectStrings(out[0], {3}, {"", "def", ""});
    // Negative pos counts from the end.
    out = RunOp("Substr", {Fed(Strings({2}, {"Hello", "World"})), Fed(IntScalar(-3, t)), Fed(IntScalar(2, t))}, TAttr(t));
    ExpectStrings(out[0], {2}, {"ll", "rl"});
  }
}

TEST(SubstrTest, ElementwiseAndBroadcastPositions) {
  // Same shape: elementwise (TF doc: [[1,2,3],[4,5,6]] style).
  const Tensor in = Strings({2, 3}, {"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"});
  std::vector<Tensor> out = RunOp(
      "Substr", {Fed(in), Fed(IntTensor(GR_INT32, {2, 3}, {1, 2, 3, 1, 2, 3})), Fed(IntTensor(GR_INT32, {2, 3}, {2, 3, 4, 4, 3, 2}))},
      TAttr(GR_INT32));
  ExpectStrings(out[0], {2, 3}, {"en", "eve", "lve", "hirt", "urt", "te"});
  // Broadcast: positions [3] against input [2, 3] (TF doc example).
  out = RunOp("Substr", {Fed(in), Fed(IntTensor(GR_INT64, {3}, {1, 2, 3})), Fed(IntTensor(GR_INT64, {3}, {2, 3, 4}))},
              TAttr(GR_INT64));
  ExpectStrings(out[0], {2, 3}, {"en", "eve", "lve", "hi", "urt", "teen"});
  // Broadcast the other way: a scalar input against vector positions.
  out = RunOp("Substr", {Fed(Str("abcdef")), Fed(IntTensor(GR_INT32, {3}, {0, 2, 4})), Fed(IntTensor(GR_INT32, {3}, {1, 2, 9}))},
              TAttr(GR_INT32));
  ExpectStrings(out[0], {3}, {"a", "cd", "ef"});
}

TEST(SubstrTest, Utf8Chars) {
  // "héllo wörld": 11 characters, 13 bytes.
  const std::string s = "h\xc3\xa9llo w\xc3\xb6rld";
  std::vector<Tensor> out =
      RunOp("Substr", {Fed(Str(s)), Fed(IntScalar(1)), Fed(IntScalar(4))}, TAttr(GR_INT32) + StrAttr("unit", "UTF8_CHAR"));
  ExpectStrings(out[0], {}, {"\xc3\xa9llo"});
  out = RunOp("Substr", {Fed(Str(s)), Fed(IntScalar(-5)), Fed(IntScalar(2))}, TAttr(GR_INT32) + StrAttr("unit", "UTF8_CHAR"));
  ExpectStrings(out[0], {}, {"w\xc3\xb6"});
  // The same positions in bytes cut the character in two.
  out = RunOp("Substr", {Fed(Str(s)), Fed(IntScalar(1)), Fed(IntScalar(1))}, TAttr(GR_INT32));
  ExpectStrings(out[0], {}, {"\xc3"});
  // pos 11 (== length in characters) is allowed, 12 is not.
  out = RunOp("Substr", {Fed(Str(s)), Fed(IntScalar(11)), Fed(IntScalar(1))}, TAttr(GR_INT32) + StrAttr("unit", "UTF8_CHAR"));
  ExpectStrings(out[0], {}, {""});
  std::vector<Tensor> o;
  EXPECT_ERROR(TryOp("Substr", {Fed(Str(s)), Fed(IntScalar(12)), Fed(IntScalar(1))},
                     TAttr(GR_INT32) + StrAttr("unit", "UTF8_CHAR"), 1, &o),
               Code::kInvalidArgument, "pos 12 out of range", "at index 0");
}

TEST(SubstrTest, Errors) {
  std::vector<Tensor> out;
  // pos beyond the string, either side.
  EXPECT_ERROR(TryOp("Substr", {Fed(Strings({2}, {"abcdef", "ab"})), Fed(IntScalar(3)), Fed(IntScalar(1))}, TAttr(GR_INT32), 1,
                     &out),
               Code::kInvalidArgument, "pos 3 out of range for string b'ab' at index 1", "op");
  EXPECT_ERROR(TryOp("Substr", {Fed(Str("abc")), Fed(IntScalar(-4)), Fed(IntScalar(1))}, TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "pos -4 out of range");
  // pos and len of different shapes.
  EXPECT_ERROR(TryOp("Substr", {Fed(Strings({2}, {"a", "b"})), Fed(IntTensor(GR_INT32, {2}, {0, 0})), Fed(IntScalar(1))},
                     TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "pos and len should have the same shape");
  // Shapes that do not broadcast.
  EXPECT_ERROR(TryOp("Substr", {Fed(Strings({2}, {"a", "b"})), Fed(IntTensor(GR_INT32, {3}, {0, 0, 0})),
                                Fed(IntTensor(GR_INT32, {3}, {0, 0, 0}))},
                     TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "Incompatible shapes");
  // A bad unit is refused by the op definition.
  EXPECT_EQ(TryOp("Substr", {Fed(Str("a")), Fed(IntScalar(0)), Fed(IntScalar(1))}, TAttr(GR_INT32) + StrAttr("unit", "WORD"), 1,
                  &out)
                .code(),
            Code::kInvalidArgument);
}

// ========================================================= RegexReplace

TEST(RegexReplaceTest, GlobalAndFirstMatch) {
  const Tensor in = Strings({3}, {"aaa bbb", "a.b.c", ""});
  std::vector<Tensor> out = RunOp("RegexReplace", {Fed(in), Fed(Str("a+")), Fed(Str("X"))}, "");
  ExpectStrings(out[0], {3}, {"X bbb", "X.b.c", ""});
  out = RunOp("RegexReplace", {Fed(in), Fed(Str("[ab]")), Fed(Str("<\\0>"))}, BoolAttr("replace_global", false));
  ExpectStrings(out[0], {3}, {"<a>aa bbb", "<a>.b.c", ""});
  out = RunOp("RegexReplace", {Fed(in), Fed(Str("[ab]")), Fed(Str("<\\0>"))}, BoolAttr("replace_global", true));
  ExpectStrings(out[0], {3}, {"<a><a><a> <b><b><b>", "<a>.<b>.c", ""});
  // Capture groups, RE2 syntax (TF doc-style: strip a prefix).
  out = RunOp("RegexReplace", {Fed(Strings({2}, {"key=value", "k2=v2"})), Fed(Str("(\\w+)=(\\w+)")), Fed(Str("\\2:\\1"))}, "");
  ExpectStrings(out[0], {2}, {"value:key", "v2:k2"});
  // StaticRegexReplace: the same with attrs (RE2's \d class).
  out = RunOp("StaticRegexReplace", {Fed(Strings({2}, {"a1b22", "none"}))},
              StrAttr("pattern", "\\\\d") + StrAttr("rewrite", "#") + BoolAttr("replace_global", true));
  ExpectStrings(out[0], {2}, {"a#b##", "none"});
  out = RunOp("StaticRegexReplace", {Fed(Strings({1}, {"a1b22"}))},
              StrAttr("pattern", "\\\\d") + StrAttr("rewrite", "#") + BoolAttr("replace_global", false));
  ExpectStrings(out[0], {1}, {"a#b22"});
}

TEST(RegexReplaceTest, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("RegexReplace", {Fed(Str("x")), Fed(Str("(")), Fed(Str(""))}, "", 1, &out), Code::kInvalidArgument,
               "Invalid pattern: (", "op");
  EXPECT_ERROR(TryOp("RegexReplace", {Fed(Str("x")), Fed(Str("(a)")), Fed(Str("\\2"))}, "", 1, &out), Code::kInvalidArgument,
               "Invalid rewrite pattern");
  EXPECT_ERROR(TryOp("RegexReplace", {Fed(Str("x")), Fed(Strings({1}, {"a"})), Fed(Str(""))}, "", 1, &out),
               Code::kInvalidArgument, "Pattern must be scalar");
  EXPECT_ERROR(TryOp("RegexReplace", {Fed(Str("x")), Fed(Str("a")), Fed(Strings({1}, {""}))}, "", 1, &out),
               Code::kInvalidArgument, "rewrite must be scalar");
  EXPECT_ERROR(TryOp("StaticRegexReplace", {Fed(Str("x"))}, StrAttr("pattern", "[") + StrAttr("rewrite", ""), 1, &out),
               Code::kInvalidArgument, "Invalid pattern: [", "op");
}

// ======================================================= RegexFullMatch

TEST(RegexFullMatchTest, MatchesTheWholeString) {
  // A partial match is not a full match ("ab1" against \w\d only in part).
  std::vector<Tensor> out =
      RunOp("RegexFullMatch", {Fed(Strings({2, 2}, {"a1", "ab1", "", "z9"})), Fed(Str("[a-z]\\d"))}, "");
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  EXPECT_EQ(ToVector<bool>(out[0]), (std::vector<bool>{true, false, false, true}));
  // TensorFlow 2's checkpoint functions ask whether a prefix is a remote path.
  out = RunOp("StaticRegexFullMatch", {Fed(Strings({3}, {"s3://bucket/ckpt", "/tmp/ckpt", "gs://b/c"}))},
              StrAttr("pattern", "^s3://.*"));
  EXPECT_EQ(ToVector<bool>(out[0]), (std::vector<bool>{true, false, false}));
  out = RunOp("StaticRegexFullMatch", {Fed(Str("abc"))}, StrAttr("pattern", "a.c"));
  EXPECT_EQ(DimsOf(out[0]), (Dims{}));
  EXPECT_EQ(ToVector<bool>(out[0]), (std::vector<bool>{true}));
}

TEST(RegexFullMatchTest, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("RegexFullMatch", {Fed(Str("x")), Fed(Str("("))}, "", 1, &out), Code::kInvalidArgument,
               "Invalid pattern: (", "op");
  EXPECT_ERROR(TryOp("RegexFullMatch", {Fed(Str("x")), Fed(Strings({1}, {"a"}))}, "", 1, &out),
               Code::kInvalidArgument, "Pattern must be scalar");
  EXPECT_ERROR(TryOp("StaticRegexFullMatch", {Fed(Str("x"))}, StrAttr("pattern", "["), 1, &out),
               Code::kInvalidArgument, "Invalid pattern: [", "op");
}

// ======================================================= StringToNumber

TEST(StringToNumberTest, ParsesEachType) {
  const Tensor in = Strings({2, 2}, {"1.5", " -2e3 ", "+7", "inf"});
  std::vector<Tensor> out = RunOp("StringToNumber", {Fed(in)}, "");
  ASSERT_EQ(out[0].dtype(), GR_FLOAT);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{1.5f, -2000.f, 7.f, std::numeric_limits<float>::infinity()}));
  out = RunOp("StringToNumber", {Fed(Strings({3}, {"0.1", "1e300", "-NaN"}))}, TypeAttr("out_type", "DT_DOUBLE"));
  EXPECT_EQ(out[0].data<double>()[0], 0.1);
  EXPECT_EQ(out[0].data<double>()[1], 1e300);
  EXPECT_TRUE(std::isnan(out[0].data<double>()[2]));
  // Out of float's range: infinity; below it: zero.
  out = RunOp("StringToNumber", {Fed(Strings({3}, {"1e300", "-1e40", "1e-50"}))}, "");
  EXPECT_EQ(ToVector<float>(out[0]),
            (std::vector<float>{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 0.f}));
  out = RunOp("StringToNumber", {Fed(Strings({3}, {"2147483647", "-2147483648", " 12\t"}))}, TypeAttr("out_type", "DT_INT32"));
  ExpectValuesEq<int32_t>(out[0], {2147483647, -2147483647 - 1, 12});
  out = RunOp("StringToNumber", {Fed(Strings({2}, {"9223372036854775807", "-5"}))}, TypeAttr("out_type", "DT_INT64"));
  ExpectValuesEq<int64_t>(out[0], {std::numeric_limits<int64_t>::max(), -5});
}

TEST(StringToNumberTest, Errors) {
  for (const auto& [bad, type] : std::vector<std::pair<std::string, std::string>>{
           {"", "DT_FLOAT"},     {"1.5x", "DT_FLOAT"},  {"0x10", "DT_FLOAT"},          {"1.5", "DT_INT32"},
           {"2147483648", "DT_INT32"}, {"abc", "DT_INT64"}, {"99999999999999999999", "DT_INT64"}, {"+-1", "DT_INT32"},
           {"1 2", "DT_DOUBLE"}}) {
    std::vector<Tensor> out;
    EXPECT_ERROR(TryOp("StringToNumber", {Fed(Strings({2}, {"1", bad}))}, TypeAttr("out_type", type), 1, &out),
                 Code::kInvalidArgument, "StringToNumberOp could not correctly convert string: " + bad);
  }
}

// ============================================================= AsString

TEST(AsStringTest, FormatsByAttrs) {
  std::vector<Tensor> out = RunOp("AsString", {Fed(IntTensor(GR_INT32, {3}, {0, -42, 7}))}, TAttr(GR_INT32));
  ExpectStrings(out[0], {3}, {"0", "-42", "7"});
  out = RunOp("AsString", {Fed(IntTensor(GR_INT64, {2}, {int64_t{1} << 40, -1}))}, TAttr(GR_INT64) + IntAttr("width", 4) +
                                                                                   StrAttr("fill", "0"));
  ExpectStrings(out[0], {2}, {"1099511627776", "-001"});
  const Tensor f = MakeTensor<float>(GR_FLOAT, {3}, {1.5f, -0.25f, 1234567.f});
  out = RunOp("AsString", {Fed(f)}, TAttr(GR_FLOAT));
  ExpectStrings(out[0], {3}, {"1.500000", "-0.250000", "1234567.000000"});
  out = RunOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + IntAttr("precision", 2));
  ExpectStrings(out[0], {3}, {"1.50", "-0.25", "1234567.00"});
  out = RunOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + BoolAttr("scientific", true) + IntAttr("precision", 1));
  ExpectStrings(out[0], {3}, {"1.5e+00", "-2.5e-01", "1.2e+06"});
  out = RunOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + BoolAttr("shortest", true));
  ExpectStrings(out[0], {3}, {"1.5", "-0.25", "1.23457e+06"});
  out = RunOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + IntAttr("width", 10) + IntAttr("precision", 1));
  ExpectStrings(out[0], {3}, {"       1.5", "      -0.2", " 1234567.0"});
  out = RunOp("AsString", {Fed(BoolTensor({2}, {true, false}))}, TAttr(GR_BOOL));
  ExpectStrings(out[0], {2}, {"true", "false"});
}

TEST(AsStringTest, Errors) {
  std::vector<Tensor> out;
  const Tensor f = MakeTensor<float>(GR_FLOAT, {1}, {1});
  EXPECT_ERROR(TryOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + BoolAttr("scientific", true) + BoolAttr("shortest", true), 1, &out),
               Code::kInvalidArgument, "Cannot select both scientific and shortest");
  EXPECT_ERROR(TryOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + IntAttr("width", 3) + StrAttr("fill", "ab"), 1, &out),
               Code::kInvalidArgument, "Fill string must be one or fewer characters");
  EXPECT_ERROR(TryOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + IntAttr("width", 3) + StrAttr("fill", "x"), 1, &out),
               Code::kInvalidArgument, "Fill argument not supported");
  EXPECT_ERROR(TryOp("AsString", {Fed(IntScalar(1))}, TAttr(GR_INT32) + IntAttr("precision", 2), 1, &out),
               Code::kInvalidArgument, "only to floating point");
  EXPECT_ERROR(TryOp("AsString", {Fed(f)}, TAttr(GR_FLOAT) + IntAttr("width", 1000000000), 1, &out),
               Code::kInvalidArgument, "at most 4096");
}

}  // namespace
}  // namespace graphrt
